// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.fixtures.Objects.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.fixtures.NetpolWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The calculator caches endpoint protos, each node's endpoint/policy/set lists and the
 * snapshots. Every snapshot is taken (so every cache is warm) before each change, and after the
 * change every node's snapshot must equal, byte for byte, a fresh calculator's fed the same
 * final objects.
 */
class SnapshotCachingTest {
    private final Map<String, Namespace> namespaces = new TreeMap<>();
    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final Map<String, Node> nodes = new TreeMap<>();
    private IncrementalPolicyCalculator calc;

    @BeforeEach
    void world() {
        calc = new IncrementalPolicyCalculator();
        NetpolWorld.namespaces().forEach(this::upsert);
        NetpolWorld.pods().forEach(this::upsert);
        // A cluster-wide set (namespaceSelector), a namespace-scoped one, and an egress policy.
        upsert(policy("x", """
                metadata: {name: from-clients}
                spec:
                  podSelector: {}
                  ingress: [{from: [{namespaceSelector: {}, podSelector: {matchLabels: {role: client}}}]}]
                """));
        upsert(policy("y", """
                metadata: {name: from-b}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]
                """));
        upsert(policy("z", """
                metadata: {name: to-ns-y}
                spec:
                  podSelector: {}
                  policyTypes: [Egress]
                  egress: [{to: [{namespaceSelector: {matchLabels: {ns: y}}}]}]
                """));
        assertMatchesFresh();
    }

    private void upsert(Namespace n) {
        namespaces.put(n.getMetadata().getName(), n);
        calc.upsertNamespace(Objects.copy(n));
    }

    private void upsert(Pod p) {
        pods.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
        calc.upsertPod(Objects.copy(p));
    }

    private void upsert(NetworkPolicy p) {
        policies.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
        calc.upsertPolicy(Objects.copy(p));
    }

    private void upsert(Node n) {
        nodes.put(n.getMetadata().getName(), n);
        calc.upsertNode(Objects.copy(n));
    }

    /** Compares every node, then warms every cache for the next step. */
    private void assertMatchesFresh() {
        IncrementalPolicyCalculator fresh = new IncrementalPolicyCalculator();
        namespaces.values().forEach(n -> fresh.upsertNamespace(Objects.copy(n)));
        policies.values().forEach(p -> fresh.upsertPolicy(Objects.copy(p)));
        pods.values().forEach(p -> fresh.upsertPod(Objects.copy(p)));
        nodes.values().forEach(n -> fresh.upsertNode(Objects.copy(n)));
        TreeSet<String> all = new TreeSet<>(fresh.nodes());
        all.addAll(calc.nodes());
        all.addAll(List.of("node-1", "node-2", "node-3", "node-4"));
        assertThat(calc.nodes()).isEqualTo(fresh.nodes());
        for (String node : all) {
            NodeSnapshot got = calc.snapshot(node);
            NodeSnapshot want = fresh.snapshot(node);
            assertThat(got).as(node).isEqualTo(want);
            assertThat(got.toByteString()).as(node).isEqualTo(want.toByteString());
        }
        calc.drainChangedNodes();
    }

    private Endpoint endpoint(String node, String ns, String pod) {
        return calc.snapshot(node).getEndpointsList().stream()
                .filter(e -> e.getId().getNamespace().equals(ns)
                        && e.getId().getPod().equals(pod))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void podRelabelIntoAClusterWideSetKeepsOtherEndpointProtos() {
        String node = NetpolWorld.node("x", "b");
        Endpoint untouched = endpoint(node, "x", "b");
        upsert(NetpolWorld.pod("y", "c", Map.of("pod", "c", "role", "client")));
        assertThat(calc.drainChangedNodes()).contains(node);
        // Only the set's members changed on this node: its endpoint protos are reused.
        assertThat(endpoint(node, "x", "b")).isSameAs(untouched);
        assertMatchesFresh();
        upsert(NetpolWorld.pod("y", "c", Map.of("pod", "c")));
        assertMatchesFresh();
    }

    @Test
    void aSetOnlyChangeRebuildsTheNodeFromItsPreviousSnapshot() {
        String node = NetpolWorld.node("x", "b");
        assertThat(NetpolWorld.node("y", "c")).isNotEqualTo(node);
        NodeSnapshot before = calc.snapshot(node);
        upsert(NetpolWorld.pod("y", "c", Map.of("pod", "c", "role", "client")));
        NodeSnapshot after = calc.snapshot(node);
        // The previous snapshot's lists themselves, not copies: the rebuild costs the changed set.
        assertThat(after.getEndpointsList()).isSameAs(before.getEndpointsList());
        assertThat(after.getPoliciesList()).isSameAs(before.getPoliciesList());
        // Only the cluster-wide set, which y/c joined, is a new instance.
        assertThat(after.getIpSetsCount()).isEqualTo(before.getIpSetsCount()).isGreaterThan(1);
        for (int i = 0; i < after.getIpSetsCount(); i++) {
            if (after.getIpSets(i).getMembersList().contains(NetpolWorld.ip("y/c"))
                    && !before.getIpSets(i).getMembersList().contains(NetpolWorld.ip("y/c"))) {
                assertThat(after.getIpSets(i)).isNotSameAs(before.getIpSets(i));
            } else {
                assertThat(after.getIpSets(i)).as(after.getIpSets(i).getId()).isSameAs(before.getIpSets(i));
            }
        }
        assertMatchesFresh();
    }

    @Test
    void aNodeThatStoppedUsingASetIsNotReportedWhenTheSetChanges() {
        // from-clients now selects x/a only: x/b's node keeps no policy using the cluster-wide set,
        // which lives on (the same set, still used on x/a's node).
        upsert(policy("x", """
                metadata: {name: from-clients}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  ingress: [{from: [{namespaceSelector: {}, podSelector: {matchLabels: {role: client}}}]}]
                """));
        assertMatchesFresh();
        String stopped = NetpolWorld.node("x", "b");
        String user = NetpolWorld.node("x", "a");
        String joiner = NetpolWorld.node("z", "a");
        assertThat(List.of(user, joiner)).doesNotContain(stopped).doesNotHaveDuplicates();
        upsert(NetpolWorld.pod("z", "a", Map.of("pod", "a", "role", "client")));
        assertThat(calc.drainChangedNodes()).containsExactlyInAnyOrder(user, joiner);
        assertMatchesFresh();
    }

    @Test
    void podRelabelChangingItsSelection() {
        upsert(NetpolWorld.pod("y", "b", Map.of("pod", "a")));
        assertMatchesFresh();
        upsert(NetpolWorld.pod("y", "a", Map.of("pod", "b")));
        assertMatchesFresh();
    }

    @Test
    void podAddressChange() {
        upsert(NetpolWorld.pod("y", "c", Map.of("pod", "c", "role", "client")));
        assertMatchesFresh();
        upsert(Objects.pod(
                "y",
                "c",
                Map.of("pod", "c", "role", "client"),
                NetpolWorld.node("y", "c"),
                List.of("10.9.9.9", "fd00::9"),
                List.of()));
        assertMatchesFresh();
        upsert(Objects.pod("y", "b", Map.of("pod", "b"), NetpolWorld.node("y", "b"), List.of("10.9.9.8"), List.of()));
        assertMatchesFresh();
    }

    @Test
    void podMovesToAnotherNode() {
        upsert(Objects.pod("x", "a", Map.of("pod", "a"), "node-4", List.of("10.0.1.1"), List.of()));
        assertMatchesFresh();
        upsert(Objects.pod("x", "a", Map.of("pod", "a", "role", "client"), "node-2", List.of("10.0.1.1"), List.of()));
        assertMatchesFresh();
    }

    @Test
    void policyChanges() {
        // Same selection, new direction: endpoint tiers change without a selection change.
        upsert(policy("y", """
                metadata: {name: from-b}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  policyTypes: [Ingress, Egress]
                  ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]
                """));
        assertMatchesFresh();
        upsert(policy("y", """
                metadata: {name: from-b}
                spec:
                  podSelector: {matchLabels: {pod: c}}
                  ingress: [{from: [{podSelector: {matchLabels: {pod: a}}}]}]
                """));
        assertMatchesFresh();
        calc.deletePolicy("x", "from-clients");
        policies.remove("x/from-clients");
        assertMatchesFresh();
        upsert(policy("x", """
                metadata: {name: from-clients}
                spec: {podSelector: {matchLabels: {pod: b}}, policyTypes: [Ingress]}
                """));
        assertMatchesFresh();
    }

    @Test
    void namespaceLabelChange() {
        upsert(Objects.namespace("x", Map.of("ns", "y")));
        assertMatchesFresh();
        upsert(Objects.namespace("y", Map.of("ns", "other")));
        assertMatchesFresh();
        calc.deleteNamespace("z");
        namespaces.remove("z");
        assertMatchesFresh();
    }

    @Test
    void podDeletion() {
        upsert(NetpolWorld.pod("z", "b", Map.of("pod", "b", "role", "client")));
        assertMatchesFresh();
        calc.deletePod("z", "b");
        pods.remove("z/b");
        assertMatchesFresh();
        for (String p : List.of("x/a", "y/c", "z/b")) {
            String[] nn = p.split("/");
            calc.deletePod(nn[0], nn[1]);
            pods.remove(p);
        }
        assertMatchesFresh();
        upsert(NetpolWorld.pod("x", "a", Map.of("pod", "a")));
        assertMatchesFresh();
    }

    @Test
    void nodePodCidrChanges() {
        upsert(NodePodCidrsTest.node("node-1", "10.244.1.0/24", null));
        upsert(NodePodCidrsTest.node("node-4", "10.244.4.0/24", null)); // no endpoints
        assertMatchesFresh();
        upsert(NodePodCidrsTest.node("node-1", null, List.of("10.244.11.0/24", "fd00::/64")));
        assertMatchesFresh();
        upsert(NetpolWorld.pod("y", "c", Map.of("pod", "c", "role", "client"))); // a set change after it
        assertMatchesFresh();
        calc.deleteNode("node-1");
        nodes.remove("node-1");
        assertMatchesFresh();
        calc.deleteNode("node-4");
        nodes.remove("node-4");
        assertMatchesFresh();
    }
}
