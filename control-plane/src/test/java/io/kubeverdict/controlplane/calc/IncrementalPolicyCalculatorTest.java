// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.fixtures.Objects.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.NetpolWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Rule;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class IncrementalPolicyCalculatorTest {
    IncrementalPolicyCalculator calc;

    @BeforeEach
    void world() {
        calc = new IncrementalPolicyCalculator();
        NetpolWorld.namespaces().forEach(calc::upsertNamespace);
        NetpolWorld.pods().forEach(calc::upsertPod);
        calc.drainChangedNodes();
    }

    private NodeSnapshot snapshotOf(String pod) {
        String[] p = pod.split("/");
        return calc.snapshot(NetpolWorld.node(p[0], p[1]));
    }

    private static IpSet set(NodeSnapshot s, String id) {
        return s.getIpSetsList().stream()
                .filter(x -> x.getId().equals(id))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void endpointsCarryAddressesLabelsAndTheDefaultTierOnlyWhenSelected() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: p}
                spec: {podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress]}
                """));
        NodeSnapshot s = snapshotOf("x/a");
        var xa = s.getEndpointsList().stream()
                .filter(e -> e.getId().getPod().equals("a")
                        && e.getId().getNamespace().equals("x"))
                .findFirst()
                .orElseThrow();
        assertThat(xa.getEndpoint().getIpsList()).containsExactly("10.0.1.1");
        assertThat(xa.getEndpoint().getLabelsMap()).containsEntry("pod", "a");
        assertThat(xa.getEndpoint().getTiersList()).hasSize(1);
        assertThat(xa.getEndpoint().getTiers(0).getIngressPoliciesList()).containsExactly("x/p");
        assertThat(xa.getEndpoint().getTiers(0).getEgressPoliciesList()).isEmpty();
        assertThat(s.getPoliciesList()).extracting(p -> p.getId().getName()).containsExactly("x/p");
        // Nodes without selected endpoints do not carry the policy.
        assertThat(snapshotOf("x/b").getPoliciesList()).isEmpty();
        assertThat(snapshotOf("x/b").getEndpointsList())
                .allSatisfy(e -> assertThat(e.getEndpoint().getTiersList()).isEmpty());
    }

    @Test
    void aPolicyMovedIntoASelectionOthersJoinBeforeAnyReadKeepsSelectingItsPods() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: moved}
                spec: {podSelector: {matchLabels: {pod: a}}}
                """));
        calc.upsertPolicy(policy("x", """
                metadata: {name: stays}
                spec: {podSelector: {matchLabels: {pod: a}}}
                """));
        assertThat(calc.policiesSelecting("x/a")).containsExactly("x/moved", "x/stays");
        // No read between the two: the namespace-wide selection has a policy joining when "moved"
        // leaves {pod: a} (which "stays" keeps) for it, so its key must leave x/a before it joins again.
        calc.upsertPolicy(policy("x", """
                metadata: {name: other}
                spec: {podSelector: {}}
                """));
        calc.upsertPolicy(policy("x", """
                metadata: {name: moved}
                spec: {podSelector: {}}
                """));
        assertThat(calc.policiesSelecting("x/a")).containsExactly("x/moved", "x/other", "x/stays");
        assertThat(calc.policiesSelecting("x/b")).containsExactly("x/moved", "x/other");
    }

    @Test
    void equalPrioritiesMetInOneBurstWarnOfExactlyThePairThatOverlaps() {
        calc.upsertAdminPolicy(anp("gone", 5, "{}"));
        // These two keep the selections "gone" and "moves" leave.
        calc.upsertAdminPolicy(anp("stays", 9, "{}"));
        calc.upsertAdminPolicy(anp("stays-in-x", 11, "{matchLabels: {kubernetes.io/metadata.name: x}}"));
        calc.upsertAdminPolicy(anp("moves", 7, "{matchLabels: {kubernetes.io/metadata.name: x}}"));
        assertThat(calc.problems()).isEmpty();
        // No read between: "gone" leaves priority 5, "moves" (another selection, x's pods) takes
        // it, "joins" shares it: the pair to warn of is "moves" and "joins", never "gone".
        calc.deleteAdminPolicy(AdminPolicyKind.ADMIN_NETWORK_POLICY, "gone");
        calc.upsertAdminPolicy(anp("moves", 5, "{matchLabels: {kubernetes.io/metadata.name: x}}"));
        calc.upsertAdminPolicy(anp("joins", 5, "{}"));
        assertThat(calc.problems()).extracting(PolicyProblem::name).containsExactlyInAnyOrder("joins", "moves");
        calc.deleteAdminPolicy(AdminPolicyKind.ADMIN_NETWORK_POLICY, "joins");
        assertThat(calc.problems()).isEmpty();
    }

    /** An AdminNetworkPolicy at this priority over the pods of the namespaces this selector matches. */
    private static GenericKubernetesResource anp(String name, int priority, String namespaces) {
        return HouseWorld.anp("""
                metadata: {name: %s}
                spec:
                  priority: %d
                  subject: {namespaces: %s}
                  ingress: [{name: deny, action: Deny, from: [{namespaces: {}}]}]
                """.formatted(name, priority, namespaces));
    }

    @Test
    void equalSelectorsShareOneReferenceCountedSet() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: p1}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}
                """));
        calc.upsertPolicy(policy("x", """
                metadata: {name: p2}
                spec:
                  podSelector: {}
                  ingress: [{from: [{podSelector: {matchExpressions: [{key: pod, operator: In, values: [b, b]}]}}]}]
                """));
        // matchLabels {pod: b} and "pod In (b, b)" are the same selector in canonical form.
        assertThat(calc.ipSetCount()).isEqualTo(1);
        NodeSnapshot s = snapshotOf("x/a");
        assertThat(s.getIpSetsList()).hasSize(1);
        assertThat(s.getIpSets(0).getMembersList()).containsExactly("10.0.1.2");
        calc.deletePolicy("x", "p1");
        assertThat(calc.ipSetCount()).isEqualTo(1);
        calc.deletePolicy("x", "p2");
        assertThat(calc.ipSetCount()).isZero();
        // The same selector in another namespace is another set (scope is part of the content).
        calc.upsertPolicy(policy("y", """
                metadata: {name: p1}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}
                """));
        assertThat(set(snapshotOf("y/a"), snapshotOf("y/a").getIpSets(0).getId())
                        .getMembersList())
                .containsExactly("10.0.2.2");
    }

    @Test
    void namedPortsBecomeAddressPortSetsResolvedPerPod() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: named}
                spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{ports: [{port: serve-81-udp, protocol: UDP}]}]}
                """));
        NodeSnapshot s = snapshotOf("x/a");
        Rule rule = s.getPolicies(0).getPolicy().getInboundRules(0);
        assertThat(rule.getAllPeers()).isTrue();
        String id = rule.getPorts(0).getNamedPortIpSetId();
        assertThat(id).startsWith("n:");
        IpSet named = set(s, id);
        assertThat(named.getType()).isEqualTo(IpSetType.IP_AND_PORT);
        // Ingress: resolved over the pods the policy selects only.
        assertThat(named.getMembersList()).containsExactly("10.0.1.1,udp:81");
    }

    @Test
    void egressNamedPortsAreResolvedOverEachSelectorPeerOnly() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: egress-named}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  policyTypes: [Egress]
                  egress:
                  - to: [{namespaceSelector: {matchLabels: {ns: y}}, podSelector: {matchLabels: {pod: b}}}, {ipBlock: {cidr: 10.0.3.0/24}}]
                    ports: [{port: serve-80-tcp}, {port: 81}]
                """));
        NodeSnapshot s = snapshotOf("x/a");
        List<Rule> rules = s.getPolicies(0).getPolicy().getOutboundRulesList();
        assertThat(rules).extracting(Rule::getRuleId).containsOnly("egress[0]");
        assertThat(rules).hasSize(3);
        // Numeric ports keep every peer.
        assertThat(rules.get(0).getPeersCount()).isEqualTo(2);
        assertThat(rules.get(0).getPortsList()).extracting(p -> p.getPort()).containsExactly(81);
        // The selector peer's named port: every peer, named port resolved over y/b only.
        assertThat(rules.get(1).getAllPeers()).isTrue();
        assertThat(set(s, rules.get(1).getPorts(0).getNamedPortIpSetId()).getMembersList())
                .containsExactly("10.0.2.2,tcp:80");
        // The ipBlock peer's named port: resolved over every pod of the cluster.
        assertThat(rules.get(2).getPeers(0).getIpBlock().getCidr()).isEqualTo("10.0.3.0/24");
        assertThat(set(s, rules.get(2).getPorts(0).getNamedPortIpSetId()).getMembersCount())
                .isEqualTo(9);
    }

    @Test
    void labelChangeMovesPodBetweenSetsAndMarksOnlyAffectedNodes() {
        calc.upsertPolicy(policy("y", """
                metadata: {name: from-blue}
                spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{from: [{namespaceSelector: {}, podSelector: {matchLabels: {color: blue}}}]}]}
                """));
        calc.drainChangedNodes();
        Pod zc = NetpolWorld.pod("x", "a", Map.of("pod", "a", "color", "blue"));
        assertThat(NetpolWorld.node("x", "a")).isNotEqualTo(NetpolWorld.node("y", "a"));
        calc.upsertPod(zc);
        // x/a's own node (its labels changed) and y/a's node (its policy's set changed), no other.
        assertThat(calc.drainChangedNodes())
                .containsExactlyInAnyOrder(NetpolWorld.node("x", "a"), NetpolWorld.node("y", "a"));
        NodeSnapshot s = snapshotOf("y/a");
        assertThat(s.getIpSets(0).getMembersList()).containsExactly("10.0.1.1");
        // An update that changes nothing relevant changes no node.
        calc.upsertPod(Objects.copy(zc));
        assertThat(calc.drainChangedNodes()).isEmpty();
    }

    @Test
    void nonEndpointsAreNeitherSelectedNorMembers() {
        Pod done = Objects.pod("x", "done", Map.of("pod", "b"), "node-9", List.of("10.0.9.9"), List.of());
        done.getStatus().setPhase("Succeeded");
        Pod failed = Objects.pod("x", "failed", Map.of("pod", "b"), "node-9", List.of("10.0.9.7"), List.of());
        failed.getStatus().setPhase("Failed");
        Pod host = Objects.pod("x", "host", Map.of("pod", "b"), "node-9", List.of("10.0.9.8"), List.of());
        host.getSpec().setHostNetwork(true);
        Pod noIp = Objects.pod("x", "noip", Map.of("pod", "b"), "node-9", List.of(), List.of());
        calc.upsertPod(done);
        calc.upsertPod(failed);
        calc.upsertPod(host);
        calc.upsertPod(noIp);
        calc.upsertPolicy(policy("x", """
                metadata: {name: p}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}
                """));
        assertThat(calc.nodes()).doesNotContain("node-9");
        assertThat(snapshotOf("x/a").getIpSets(0).getMembersList()).containsExactly("10.0.1.2");
    }

    /** Init containers and sidecars run while the pod is Pending, with its address: policy covers them. */
    @Test
    void podsThatAreNotTerminalAreEndpointsInEveryPhase() {
        String[] phases = {"Pending", "Unknown", ""};
        for (int i = 0; i < phases.length; i++) {
            String phase = phases[i];
            Pod pod = Objects.pod(
                    "x", "starting-" + phase, Map.of("pod", "b"), "node-9", List.of("10.0.9." + (11 + i)), List.of());
            pod.getStatus().setPhase(phase.isEmpty() ? null : phase);
            calc.upsertPod(pod);
        }
        calc.upsertPolicy(policy("x", """
                metadata: {name: p}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}
                """));
        // Selected on their node, and members of the set that policy x/p allows.
        assertThat(calc.snapshot("node-9").getEndpointsList())
                .extracting(e -> e.getId().getPod())
                .contains("starting-Pending", "starting-Unknown", "starting-");
        assertThat(snapshotOf("x/a").getIpSets(0).getMembersList())
                .containsExactlyInAnyOrder("10.0.1.2", "10.0.9.11", "10.0.9.12", "10.0.9.13");

        // Turning Succeeded takes the pod out of both.
        Pod finished =
                Objects.pod("x", "starting-Pending", Map.of("pod", "b"), "node-9", List.of("10.0.9.11"), List.of());
        finished.getStatus().setPhase("Succeeded");
        calc.upsertPod(finished);
        assertThat(snapshotOf("x/a").getIpSets(0).getMembersList())
                .containsExactlyInAnyOrder("10.0.1.2", "10.0.9.12", "10.0.9.13");
    }

    /** A terminating pod's status still shows the address a new pod has: it is neither one's meanwhile. */
    @Test
    void anAddressTwoLivePodsClaimIsGivenToNeither() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: p}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}
                """));
        Pod twin = Objects.pod("x", "twin", Map.of("pod", "b"), "node-9", List.of("10.0.1.2"), List.of());
        calc.upsertPod(twin);
        assertThat(calc.addressConflicts()).isEqualTo(Map.of("10.0.1.2", List.of("x/b", "x/twin")));
        // Not in the set policy x/p allows from, on no endpoint: the twin has no other address, so it is none.
        assertThat(snapshotOf("x/a").getIpSets(0).getMembersList()).doesNotContain("10.0.1.2");
        assertThat(calc.snapshot(NetpolWorld.node("x", "b")).getEndpointsList())
                .noneMatch(e -> e.getEndpoint().getIpsList().contains("10.0.1.2"));
        assertThat(calc.nodes()).doesNotContain("node-9");

        // The twin ends: x/b has its address again.
        Pod done = Objects.pod("x", "twin", Map.of("pod", "b"), "node-9", List.of("10.0.1.2"), List.of());
        done.getStatus().setPhase("Succeeded");
        calc.upsertPod(done);
        assertThat(calc.addressConflicts()).isEmpty();
        assertThat(snapshotOf("x/a").getIpSets(0).getMembersList()).containsExactly("10.0.1.2");
        assertThat(calc.snapshot(NetpolWorld.node("x", "b")).getEndpointsList())
                .anyMatch(e -> e.getEndpoint().getIpsList().contains("10.0.1.2"));
    }

    @Test
    void unusablePeersAndPortsNeverWiden() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: bad}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  ingress:
                  - from: [{ipBlock: {cidr: 10.0.0.0/33}}, {podSelector: {matchExpressions: [{key: pod, operator: Has}]}}]
                  - ports: [{port: 70000}, {protocol: ICMP, port: 80}]
                  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [192.168.0.0/16]}}, {podSelector: {matchLabels: {pod: b}}}]
                    ports: [{port: 80, endPort: 79}, {port: 81}]
                """));
        NodeSnapshot s = snapshotOf("x/a");
        List<Rule> rules = s.getPolicies(0).getPolicy().getInboundRulesList();
        assertThat(rules).hasSize(3);
        // Every peer dropped: matches nothing (all_peers stays false).
        assertThat(rules.get(0).getAllPeers()).isFalse();
        assertThat(rules.get(0).getPeersList()).isEmpty();
        // Every port dropped: matches nothing, even though "from" was omitted.
        assertThat(rules.get(1).getAllPeers()).isFalse();
        assertThat(rules.get(1).getPeersList()).isEmpty();
        // The ipBlock with an except outside its cidr is dropped; the selector peer stays; one port stays.
        assertThat(rules.get(2).getPeersList()).hasSize(1);
        assertThat(rules.get(2).getPeers(0).hasIpSetId()).isTrue();
        assertThat(rules.get(2).getPortsList()).hasSize(1);
        assertThat(rules.get(2).getPorts(0).getPort()).isEqualTo(81);
        assertThat(calc.problems())
                .extracting(PolicyProblem::field)
                .containsExactly(
                        "spec.ingress[0].from",
                        "spec.ingress[0].from[0].ipBlock.cidr",
                        "spec.ingress[0].from[1].podSelector",
                        "spec.ingress[1].ports",
                        "spec.ingress[1].ports[0].port",
                        "spec.ingress[1].ports[1].protocol",
                        "spec.ingress[2].from[0].ipBlock.except[0]",
                        "spec.ingress[2].ports[0].endPort");
    }

    @Test
    void anUnusablePodSelectorIsolatesTheWholeNamespaceWithNoRules() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: bad-selector}
                spec:
                  podSelector: {matchExpressions: [{key: pod, operator: In, values: []}]}
                  ingress: [{}]
                """));
        for (String pod : List.of("x/a", "x/b", "x/c")) {
            NodeSnapshot s = snapshotOf(pod);
            assertThat(s.getPoliciesList()).extracting(p -> p.getId().getName()).contains("x/bad-selector");
            assertThat(s.getPoliciesList().stream()
                            .filter(p -> p.getId().getName().equals("x/bad-selector"))
                            .findFirst()
                            .orElseThrow()
                            .getPolicy()
                            .getInboundRulesList())
                    .isEmpty();
        }
        assertThat(calc.problems()).hasSize(1);
    }

    @Test
    void ipBlocksAreCanonical() {
        calc.upsertPolicy(policy("x", """
                metadata: {name: cidr}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  policyTypes: [Egress]
                  egress: [{to: [{ipBlock: {cidr: 10.0.1.7/16, except: [10.0.1.0/24]}}, {ipBlock: {cidr: "FD00:0:0::1/64"}}]}]
                """));
        Rule r = snapshotOf("x/a").getPolicies(0).getPolicy().getOutboundRules(0);
        assertThat(r.getPeers(0).getIpBlock().getCidr()).isEqualTo("10.0.0.0/16");
        assertThat(r.getPeers(0).getIpBlock().getExceptList()).containsExactly("10.0.1.0/24");
        assertThat(r.getPeers(1).getIpBlock().getCidr()).isEqualTo("fd00::/64");
    }

    @Test
    void aNodeLosingItsLastEndpointIsReportedAndEmpty() {
        calc.deletePod("x", "a");
        calc.deletePod("y", "c");
        calc.deletePod("z", "b");
        String node = NetpolWorld.node("x", "a");
        assertThat(calc.drainChangedNodes()).contains(node);
        assertThat(calc.nodes()).doesNotContain(node);
        assertThat(calc.snapshot(node))
                .isEqualTo(NodeSnapshot.newBuilder().setNode(node).build());
    }
}
