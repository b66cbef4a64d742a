// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.kubeverdict.controlplane.fixtures.NetpolWorld;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A Node's spec.podCIDRs reach that node's snapshot (pod_cidrs), and only that node's. */
class NodePodCidrsTest {
    private IncrementalPolicyCalculator calc;

    @BeforeEach
    void world() {
        calc = new IncrementalPolicyCalculator();
        NetpolWorld.namespaces().forEach(calc::upsertNamespace);
        NetpolWorld.pods().forEach(calc::upsertPod);
        for (String n : List.of("node-1", "node-2", "node-3")) {
            calc.snapshot(n);
        }
        calc.drainChangedNodes();
    }

    static Node node(String name, String podCidr, List<String> podCidrs) {
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of("zone", "a"))
                .endMetadata()
                .withNewSpec()
                .withPodCIDR(podCidr)
                .withPodCIDRs(podCidrs)
                .endSpec()
                .withNewStatus()
                .addNewAddress()
                .withType("InternalIP")
                .withAddress("192.168.0.1")
                .endAddress()
                .endStatus()
                .build();
    }

    @Test
    void eachNodeGetsItsOwnPodCidrsInCanonicalText() {
        calc.upsertNode(node("node-1", "10.244.1.0/24", List.of("10.244.1.0/24", "fd00:0:0:1::/64")));
        calc.upsertNode(node("node-2", "10.244.2.0/24", List.of("10.244.2.0/24")));

        assertThat(calc.snapshot("node-1").getPodCidrsList()).containsExactly("10.244.1.0/24", "fd00:0:0:1::/64");
        assertThat(calc.snapshot("node-2").getPodCidrsList()).containsExactly("10.244.2.0/24");
        assertThat(calc.snapshot("node-3").getPodCidrsList()).isEmpty();
    }

    @Test
    void podCidrIsReadWhenPodCidrsIsNotSet() {
        calc.upsertNode(node("node-1", "10.244.1.0/24", null));
        assertThat(calc.snapshot("node-1").getPodCidrsList()).containsExactly("10.244.1.0/24");
    }

    @Test
    void invalidRangesAreLeftOutAndHostBitsCleared() {
        calc.upsertNode(
                node("node-1", null, List.of("10.244.1.7/24", "junk", "10.244.1.0/33", "10.244.1.0/24", "FD00::/64")));
        assertThat(calc.snapshot("node-1").getPodCidrsList()).containsExactly("10.244.1.0/24", "fd00::/64");
        assertThat(NodeModel.podCidrProblems(node("node-1", null, List.of("10.244.1.0/24", "junk"))))
                .containsExactly("spec.podCIDRs[1]: invalid CIDR \"junk\"; ignored");
        assertThat(NodeModel.podCidrProblems(node("node-1", "10.0.0.0/8", null)))
                .isEmpty();
        assertThat(NodeModel.podCidrProblems(node("node-1", "10.0.0.0/", null)))
                .containsExactly("spec.podCIDR: invalid CIDR \"10.0.0.0/\"; ignored");
    }

    @Test
    void aNodeWithoutEndpointsCarriesThemToo() {
        calc.upsertNode(node("node-9", "10.244.9.0/24", null));
        assertThat(calc.drainChangedNodes()).containsExactly("node-9");
        assertThat(calc.snapshot("node-9"))
                .isEqualTo(NodeSnapshot.newBuilder()
                        .setNode("node-9")
                        .addPodCidrs("10.244.9.0/24")
                        .build());
    }

    /** Ranges that hold the world's pods (10.0.x.y): a node does not refuse their addresses. */
    @Test
    void aChangeOfTheRangesChangesThatNodeOnly() {
        calc.upsertNode(node("node-1", "10.0.0.0/16", null));
        calc.upsertNode(node("node-2", "10.0.0.0/16", null));
        assertThat(calc.drainChangedNodes()).containsExactly("node-1", "node-2");
        NodeSnapshot before = calc.snapshot("node-1");
        NodeSnapshot other = calc.snapshot("node-2");

        calc.upsertNode(node("node-1", "10.0.0.0/20", null));

        assertThat(calc.drainChangedNodes()).containsExactly("node-1");
        NodeSnapshot after = calc.snapshot("node-1");
        assertThat(after.getPodCidrsList()).containsExactly("10.0.0.0/20");
        assertThat(after.toBuilder().clearPodCidrs().build())
                .isEqualTo(before.toBuilder().clearPodCidrs().build());
        assertThat(calc.snapshot("node-2")).isSameAs(other);
    }

    @Test
    void anUnrelatedNodeChangeChangesNoSnapshot() {
        calc.upsertNode(node("node-1", "10.0.0.0/16", null));
        calc.drainChangedNodes();
        NodeSnapshot before = calc.snapshot("node-1");

        Node relabelled = node("node-1", "10.0.0.0/16", null);
        relabelled.getMetadata().setLabels(Map.of("zone", "b"));
        calc.upsertNode(relabelled);
        // The same ranges spelt otherwise are the same ranges.
        calc.upsertNode(node("node-1", "10.0.0.0/16", List.of("10.0.1.1/16")));

        assertThat(calc.drainChangedNodes()).isEmpty();
        assertThat(calc.snapshot("node-1")).isSameAs(before);
    }

    @Test
    void deletingTheNodeEmptiesTheRanges() {
        calc.upsertNode(node("node-1", "10.244.1.0/24", null));
        calc.drainChangedNodes();
        calc.snapshot("node-1");

        calc.deleteNode("node-1");

        assertThat(calc.drainChangedNodes()).containsExactly("node-1");
        assertThat(calc.snapshot("node-1").getPodCidrsList()).isEmpty();
        assertThat(calc.snapshot("node-1").getEndpointsCount()).isPositive();
    }
}
