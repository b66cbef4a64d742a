// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Staged policies in the calculation: sent under "staged:" names, listed only in would-be tiers. */
class StagedCalculationTest {

    static final String NS = "gryffindor";
    static final String POD = "harry-potter-0";

    private static IncrementalPolicyCalculator house() {
        IncrementalPolicyCalculator c = new IncrementalPolicyCalculator();
        HouseWorld.namespaces().forEach(c::upsertNamespace);
        HouseWorld.pods().forEach(c::upsertPod);
        HouseWorld.nodes().forEach(c::upsertNode);
        return c;
    }

    private static NetworkPolicy denyAll(String annotations) {
        return Objects.policy(NS, """
                metadata:
                  name: deny-all
                  annotations: %s
                spec:
                  podSelector: {}
                  policyTypes: [Ingress]
                """.formatted(annotations));
    }

    private static NetworkPolicy allowFrom(String name, String house, String annotations) {
        return Objects.policy(NS, """
                metadata:
                  name: %s
                  annotations: %s
                spec:
                  podSelector: {}
                  ingress:
                  - from: [{namespaceSelector: {matchLabels: {house: %s}}}]
                """.formatted(name, annotations, house));
    }

    private static Endpoint endpoint(NodeSnapshot s, String pod) {
        return s.getEndpointsList().stream()
                .filter(e -> e.getId().getPod().equals(pod))
                .findFirst()
                .orElseThrow();
    }

    private static List<String> policyNames(NodeSnapshot s) {
        return s.getPoliciesList().stream().map(p -> p.getId().getName()).toList();
    }

    private static List<String> ingress(List<TierInfo> tiers, String tier) {
        return tiers.stream()
                .filter(t -> t.getName().equals(tier))
                .flatMap(t -> t.getIngressPoliciesList().stream())
                .toList();
    }

    @Test
    void aStagedPolicyIsSentButListedOnlyInTheWouldBeTiers() {
        IncrementalPolicyCalculator c = house();
        NodeSnapshot before = c.snapshot(HouseWorld.node(0));
        c.upsertPolicy(denyAll("{kube-verdict.io/staged: \"true\"}"));
        NodeSnapshot s = c.snapshot(HouseWorld.node(0));

        assertThat(policyNames(s)).contains("staged:gryffindor/deny-all");
        Endpoint e = endpoint(s, POD);
        assertThat(e.getEndpoint().getTiersList())
                .isEqualTo(endpoint(before, POD).getEndpoint().getTiersList());
        assertThat(e.getEndpoint().getTiersList()).isEmpty();
        assertThat(ingress(e.getEndpoint().getStagedTiersList(), "default"))
                .containsExactly("staged:gryffindor/deny-all");
        // other namespaces' endpoints: nothing staged
        assertThat(endpoint(s, "draco-malfoy-0").getEndpoint().getStagedTiersList())
                .isEmpty();
    }

    @Test
    void promotingItEnforcesItAndStagingItAgainTakesItBack() {
        IncrementalPolicyCalculator c = house();
        c.upsertPolicy(denyAll("{kube-verdict.io/staged: \"true\"}"));
        c.snapshot(HouseWorld.node(0));
        c.upsertPolicy(denyAll("{}"));
        NodeSnapshot s = c.snapshot(HouseWorld.node(0));
        assertThat(policyNames(s)).contains("gryffindor/deny-all").doesNotContain("staged:gryffindor/deny-all");
        Endpoint e = endpoint(s, POD);
        assertThat(ingress(e.getEndpoint().getTiersList(), "default")).containsExactly("gryffindor/deny-all");
        assertThat(e.getEndpoint().getStagedTiersList()).isEmpty();

        c.upsertPolicy(denyAll("{kube-verdict.io/staged: \"true\"}"));
        e = endpoint(c.snapshot(HouseWorld.node(0)), POD);
        assertThat(e.getEndpoint().getTiersList()).isEmpty();
        assertThat(ingress(e.getEndpoint().getStagedTiersList(), "default"))
                .containsExactly("staged:gryffindor/deny-all");

        c.deletePolicy(NS, "deny-all");
        e = endpoint(c.snapshot(HouseWorld.node(0)), POD);
        assertThat(e.getEndpoint().getStagedTiersList()).isEmpty();
    }

    @Test
    void aStagedPolicyNamingALiveOneReplacesItInTheWouldBeTiersOnly() {
        IncrementalPolicyCalculator c = house();
        c.upsertPolicy(allowFrom("allow-slytherin", "slytherin", "{}"));
        c.upsertPolicy(allowFrom(
                "allow-ravenclaw",
                "ravenclaw",
                "{kube-verdict.io/staged: \"true\", kube-verdict.io/staged-replaces: allow-slytherin}"));
        Endpoint e = endpoint(c.snapshot(HouseWorld.node(0)), POD);
        assertThat(ingress(e.getEndpoint().getTiersList(), "default")).containsExactly("gryffindor/allow-slytherin");
        assertThat(ingress(e.getEndpoint().getStagedTiersList(), "default"))
                .containsExactly("staged:gryffindor/allow-ravenclaw");

        // The replacement stops selecting the pod: the would-be list keeps nothing, said by a tier listing none.
        c.upsertPolicy(Objects.policy(NS, """
                metadata:
                  name: allow-ravenclaw
                  annotations: {kube-verdict.io/staged: "true", kube-verdict.io/staged-replaces: allow-slytherin}
                spec:
                  podSelector: {matchLabels: {nobody: here}}
                  ingress: [{}]
                """));
        e = endpoint(c.snapshot(HouseWorld.node(0)), POD);
        assertThat(ingress(e.getEndpoint().getTiersList(), "default")).containsExactly("gryffindor/allow-slytherin");
        assertThat(e.getEndpoint().getStagedTiersList()).hasSize(1);
        assertThat(ingress(e.getEndpoint().getStagedTiersList(), "default")).isEmpty();
    }

    @Test
    void anUnreadableStagedAnnotationIsReportedAndThePolicyEnforced() {
        IncrementalPolicyCalculator c = house();
        c.upsertPolicy(denyAll("{kube-verdict.io/staged: \"yes\"}"));
        Endpoint e = endpoint(c.snapshot(HouseWorld.node(0)), POD);
        assertThat(ingress(e.getEndpoint().getTiersList(), "default")).containsExactly("gryffindor/deny-all");
        assertThat(c.problems())
                .anySatisfy(p -> assertThat(p.message())
                        .contains("kube-verdict.io/staged")
                        .contains("enforced"));
    }

    @Test
    void aStagedAdminPolicyJoinsItsTierInTheWouldBeListWithoutAPriorityOverlap() {
        IncrementalPolicyCalculator c = house();
        String spec = """
                  priority: 5
                  subject: {namespaces: {matchLabels: {house: gryffindor}}}
                  ingress:
                  - name: deny-slytherin
                    action: Deny
                    from: [{namespaces: {matchLabels: {house: slytherin}}}]
                """;
        GenericKubernetesResource live = HouseWorld.anp("metadata: {name: live}\nspec:\n" + spec);
        GenericKubernetesResource staged = HouseWorld.anp(
                "metadata: {name: trial, annotations: {kube-verdict.io/staged: \"true\"}}\nspec:\n" + spec);
        c.upsertAdminPolicy(live);
        c.upsertAdminPolicy(staged);
        NodeSnapshot s = c.snapshot(HouseWorld.node(0));
        ActivePolicy sent = s.getPoliciesList().stream()
                .filter(p -> p.getId().getName().equals("staged:trial"))
                .findFirst()
                .orElseThrow();
        assertThat(sent.getId().getTier()).isEqualTo("admin");
        Endpoint e = endpoint(s, POD);
        assertThat(ingress(e.getEndpoint().getTiersList(), "admin")).containsExactly("live");
        assertThat(ingress(e.getEndpoint().getStagedTiersList(), "admin")).containsExactly("live", "staged:trial");
        assertThat(c.problems()).noneSatisfy(p -> assertThat(p.message()).contains("priority"));
    }
}
