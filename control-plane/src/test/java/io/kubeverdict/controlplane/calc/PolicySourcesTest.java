// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The objects the calculation last applied, found by the ids its snapshots give their policies. */
class PolicySourcesTest {

    private static IncrementalPolicyCalculator house() {
        IncrementalPolicyCalculator c = new IncrementalPolicyCalculator();
        HouseWorld.namespaces().forEach(c::upsertNamespace);
        HouseWorld.pods().forEach(c::upsertPod);
        HouseWorld.nodes().forEach(c::upsertNode);
        return c;
    }

    private static Optional<HasMetadata> find(PolicySources sources, String tier, String name) {
        String key = PolicySources.key(
                PolicyId.newBuilder().setTier(tier).setName(name).build());
        return key == null ? Optional.empty() : sources.get(key);
    }

    @Test
    void everyPolicyOfASnapshotNamesItsObjectOfEachKindLiveOrStaged() {
        IncrementalPolicyCalculator c = house();
        c.upsertPolicy(Objects.policy("gryffindor", """
                metadata: {name: deny-all}
                spec: {podSelector: {}, policyTypes: [Ingress]}
                """));
        c.upsertPolicy(Objects.policy("gryffindor", """
                metadata: {name: open, annotations: {kube-verdict.io/staged: "true"}}
                spec: {podSelector: {}, ingress: [{}]}
                """));
        c.upsertAdminPolicy(HouseWorld.anp("""
                metadata: {name: a}
                spec: {priority: 1, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                """));
        c.upsertAdminPolicy(HouseWorld.banp("""
                metadata: {name: default}
                spec: {subject: {namespaces: {}}, ingress: [{action: Allow, from: [{namespaces: {}}]}]}
                """));
        c.upsertAdminPolicy(HouseWorld.cnp("""
                metadata: {name: c}
                spec: {tier: Admin, priority: 2, subject: {namespaces: {}}, ingress: [{action: Pass, from: [{namespaces: {}}]}]}
                """));
        c.upsertAdminPolicy(HouseWorld.cnp("""
                metadata: {name: b, annotations: {kube-verdict.io/staged: "true"}}
                spec: {tier: Baseline, priority: 2, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                """));
        List<PolicyId> ids = c.snapshot(HouseWorld.node(0)).getPoliciesList().stream()
                .map(ActivePolicy::getId)
                .toList();
        assertThat(ids)
                .extracting(id -> id.getTier() + " " + id.getName())
                .containsExactlyInAnyOrder(
                        "default gryffindor/deny-all",
                        "default staged:gryffindor/open",
                        "admin a",
                        "baseline default",
                        "admin cnp:c",
                        "baseline staged:cnp:b");
        for (PolicyId id : ids) {
            assertThat(c.policySources().get(PolicySources.key(id)))
                    .as(id.toString())
                    .isPresent();
        }
        PolicySources sources = c.policySources();
        assertThat(find(sources, "default", "gryffindor/deny-all").orElseThrow().getKind())
                .isEqualTo("NetworkPolicy");
        assertThat(find(sources, "default", "staged:gryffindor/open")
                        .orElseThrow()
                        .getMetadata()
                        .getName())
                .isEqualTo("open");
        assertThat(find(sources, "admin", "a").orElseThrow().getKind()).isEqualTo("AdminNetworkPolicy");
        assertThat(find(sources, "baseline", "default").orElseThrow().getKind())
                .isEqualTo("BaselineAdminNetworkPolicy");
        assertThat(find(sources, "admin", "cnp:c").orElseThrow().getKind()).isEqualTo("ClusterNetworkPolicy");
        assertThat(find(sources, "baseline", "staged:cnp:b").orElseThrow().getKind())
                .isEqualTo("ClusterNetworkPolicy");
    }

    @Test
    void aDeletedPolicyIsGoneAndAnUpdateReplacesTheObject() {
        IncrementalPolicyCalculator c = house();
        c.upsertPolicy(Objects.policy("gryffindor", """
                metadata: {name: p, resourceVersion: "1"}
                spec: {podSelector: {}, policyTypes: [Ingress]}
                """));
        c.upsertPolicy(Objects.policy("gryffindor", """
                metadata: {name: p, resourceVersion: "2"}
                spec: {podSelector: {}, policyTypes: [Ingress]}
                """));
        assertThat(find(c.policySources(), "default", "gryffindor/p")
                        .orElseThrow()
                        .getMetadata()
                        .getResourceVersion())
                .isEqualTo("2");
        c.deletePolicy("gryffindor", "p");
        c.deleteAdminPolicy(AdminPolicyKind.ADMIN_NETWORK_POLICY, "never-there");
        assertThat(find(c.policySources(), "default", "gryffindor/p")).isEmpty();
        assertThat(c.policySources().size()).isZero();
    }

    @Test
    void idsThatCannotNameAnObjectNameNone() {
        for (String[] id : new String[][] {
            {"default", "no-namespace"}, {"default", "a/b/c"}, {"default", "/x"}, {"tier-x", "a"}, {"admin", ""}
        }) {
            assertThat(PolicySources.key(
                            PolicyId.newBuilder().setTier(id[0]).setName(id[1]).build()))
                    .as(String.join(" ", id))
                    .isNull();
        }
    }
}
