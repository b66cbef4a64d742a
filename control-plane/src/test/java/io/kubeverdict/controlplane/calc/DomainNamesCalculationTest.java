// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Rule;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ANP (v1alpha1) and CNP (v1alpha2) {@code domainNames} peers: contract form, watches, failing closed. */
class DomainNamesCalculationTest {

    private static IncrementalPolicyCalculator house() {
        IncrementalPolicyCalculator c = new IncrementalPolicyCalculator();
        HouseWorld.namespaces().forEach(c::upsertNamespace);
        HouseWorld.pods().forEach(c::upsertPod);
        HouseWorld.nodes().forEach(c::upsertNode);
        return c;
    }

    private static Endpoint endpoint(NodeSnapshot s, String pod) {
        return s.getEndpointsList().stream()
                .filter(e -> e.getId().getPod().equals(pod))
                .findFirst()
                .orElseThrow();
    }

    private static ActivePolicy policy(NodeSnapshot s, String name) {
        return s.getPoliciesList().stream()
                .filter(p -> p.getId().getName().equals(name))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void anAnpDomainNamesPeerBecomesACanonicalPeerAndAWatchOfItsSubjects() {
        IncrementalPolicyCalculator c = house();
        c.upsertAdminPolicy(HouseWorld.anp("""
                metadata: {name: to-api}
                spec:
                  priority: 5
                  subject: {namespaces: {matchLabels: {house: gryffindor}}}
                  egress:
                  - name: api
                    action: Allow
                    to: [{domainNames: ["API.test.", "*.svc.test", "api.test"]}]
                    ports: [{portNumber: {protocol: TCP, port: 443}}]
                """));
        NodeSnapshot s = c.snapshot("node-1");
        Rule rule = policy(s, "to-api").getPolicy().getOutboundRules(0);
        assertThat(rule.getAction()).isEqualTo(Action.ALLOW);
        DomainNames names = rule.getPeers(0).getDomainNames();
        assertThat(names.getPatternsList()).containsExactly("*.svc.test", "api.test");
        assertThat(names.getLearnedSetId()).startsWith("d:").hasSize(28);
        assertThat(endpoint(s, "harry-potter-0").getEndpoint().getDomainWatchesList())
                .containsExactly(names);
        assertThat(endpoint(s, "draco-malfoy-0").getEndpoint().getDomainWatchesList())
                .isEmpty();
        assertThat(c.problems()).isEmpty();
    }

    @Test
    void aCnpWithTheSamePatternsSharesTheLearnedSet() {
        IncrementalPolicyCalculator c = house();
        c.upsertAdminPolicy(HouseWorld.anp("""
                metadata: {name: to-api}
                spec:
                  priority: 5
                  subject: {namespaces: {}}
                  egress: [{action: Allow, to: [{domainNames: ["api.test"]}]}]
                """));
        c.upsertAdminPolicy(HouseWorld.cnp("""
                metadata: {name: also-api}
                spec:
                  tier: Baseline
                  priority: 5
                  subject: {namespaces: {}}
                  egress: [{action: Accept, to: [{domainNames: ["Api.Test"]}]}]
                """));
        NodeSnapshot s = c.snapshot("node-1");
        Peer anp = policy(s, "to-api").getPolicy().getOutboundRules(0).getPeers(0);
        Peer cnp = policy(s, "cnp:also-api").getPolicy().getOutboundRules(0).getPeers(0);
        assertThat(cnp).isEqualTo(anp);
        assertThat(endpoint(s, "harry-potter-0").getEndpoint().getDomainWatchesCount())
                .isEqualTo(1);
    }

    @Test
    void unusableDomainNamesFailClosedAndAreReported() {
        IncrementalPolicyCalculator c = house();
        c.upsertAdminPolicy(HouseWorld.anp("""
                metadata: {name: bad}
                spec:
                  priority: 5
                  subject: {namespaces: {}}
                  egress:
                  - {action: Allow, to: [{domainNames: ["localhost"]}]}
                  - {action: Deny, to: [{domainNames: ["api.test"]}]}
                  - {action: Allow, to: [{domainNames: []}]}
                  - {action: Allow, to: [{domainNames: ["api.test"]}], ports: [{namedPort: web}]}
                """));
        NodeSnapshot s = c.snapshot("node-1");
        List<Rule> rules = policy(s, "bad").getPolicy().getOutboundRulesList();
        // Allow rules match nothing; the Deny becomes "Deny all"
        assertThat(rules.get(0).getAllPeers()).isFalse();
        assertThat(rules.get(0).getPeersList()).isEmpty();
        assertThat(rules.get(1).getAction()).isEqualTo(Action.DENY);
        assertThat(rules.get(1).getAllPeers()).isTrue();
        assertThat(rules.get(2).getPeersList()).isEmpty();
        assertThat(rules.get(3).getPeersList()).isEmpty();
        assertThat(endpoint(s, "harry-potter-0").getEndpoint().getDomainWatchesList())
                .isEmpty();
        assertThat(c.problems())
                .extracting(PolicyProblem::toString)
                .anyMatch(p -> p.contains("egress[0].to[0].domainNames[0]") && p.contains("invalid domain name"))
                .anyMatch(p -> p.contains("domainNames are allowed in Allow/Accept rules only"))
                .anyMatch(p -> p.contains("egress[2].to[0].domainNames") && p.contains("non-empty list"))
                .anyMatch(p -> p.contains("named port cannot be used"));
    }
}
