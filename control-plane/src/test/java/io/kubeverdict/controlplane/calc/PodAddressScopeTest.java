// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A node cannot lie about others (audit M8): a pod's address outside its node's pod ranges
 * (Node spec.podCIDRs), and not one of the node's own addresses, is refused — left out as if the
 * pod did not have it — and reported; the same whichever comes first, the pod or its Node.
 */
class PodAddressScopeTest {
    private static final String LIAR = "203.0.113.5";
    private IncrementalPolicyCalculator calc;

    @BeforeEach
    void world() {
        calc = new IncrementalPolicyCalculator();
        calc.upsertNamespace(Objects.namespace("shop", Map.of("ns", "shop")));
        calc.upsertPolicy(Objects.policy("shop", """
                metadata: {name: backend-from-frontend}
                spec: {podSelector: {matchLabels: {app: backend}}, ingress: [{from: [{podSelector: {matchLabels: {app: frontend}}}]}]}
                """));
        calc.upsertPod(pod("backend", "backend", "node-1", "10.244.1.5"));
        calc.upsertPod(pod("frontend", "frontend", "node-2", "10.244.2.7"));
    }

    private static Pod pod(String name, String app, String node, String... ips) {
        return Objects.pod("shop", name, Map.of("app", app), node, List.of(ips), List.of());
    }

    static Node node(String name, List<String> podCidrs, String... addresses) {
        NodeBuilder b = new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withPodCIDRs(podCidrs)
                .endSpec()
                .withNewStatus()
                .endStatus();
        for (String a : addresses) {
            b.editStatus()
                    .addNewAddress()
                    .withType("InternalIP")
                    .withAddress(a)
                    .endAddress()
                    .endStatus();
        }
        return b.build();
    }

    /** The members of the set backend-from-frontend allows from, on the backend's node. */
    private List<String> frontends() {
        NodeSnapshot s = calc.snapshot("node-1");
        assertThat(s.getIpSetsList()).hasSize(1);
        return s.getIpSets(0).getMembersList();
    }

    @Test
    void aMirrorPodWithAnAddressOutsideItsNodesRangesIsNotAFrontend() {
        calc.upsertNode(node("node-3", List.of("10.244.3.0/24"), "192.168.0.3"));
        calc.upsertPod(pod("mirror", "frontend", "node-3", LIAR, "10.244.3.9"));

        assertThat(frontends()).containsExactlyInAnyOrder("10.244.2.7", "10.244.3.9");
        assertThat(calc.refusedAddresses()).containsExactly(new RefusedAddress("shop/mirror", "node-3", LIAR));
        assertThat(calc.snapshot("node-3").getEndpointsList())
                .singleElement()
                .satisfies(e -> assertThat(e.getEndpoint().getIpsList()).containsExactly("10.244.3.9"));
    }

    @Test
    void aPodWithOnlyRefusedAddressesIsNoEndpoint() {
        calc.upsertNode(node("node-3", List.of("10.244.3.0/24")));
        calc.upsertPod(pod("mirror", "frontend", "node-3", LIAR));
        assertThat(frontends()).containsExactly("10.244.2.7");
        assertThat(calc.nodes()).doesNotContain("node-3");
    }

    @Test
    void theNodesOwnAddressesAreItsToGive() {
        calc.upsertNode(node("node-3", List.of("10.244.3.0/24"), "192.168.0.3"));
        calc.upsertPod(pod("mirror", "frontend", "node-3", "192.168.0.3"));
        assertThat(frontends()).containsExactlyInAnyOrder("10.244.2.7", "192.168.0.3");
        assertThat(calc.refusedAddresses()).isEmpty();
    }

    @Test
    void aNodeWithoutRangesRefusesNothing() {
        calc.upsertNode(node("node-3", List.of(), "192.168.0.3"));
        calc.upsertPod(pod("mirror", "frontend", "node-3", LIAR));
        assertThat(frontends()).containsExactlyInAnyOrder("10.244.2.7", LIAR);
        assertThat(calc.refusedAddresses()).isEmpty();
    }

    @Test
    void aRefusedAddressContestsNoOtherPodsAddress() {
        calc.upsertNode(node("node-3", List.of("10.244.3.0/24")));
        calc.upsertPod(pod("mirror", "backend", "node-3", "10.244.2.7")); // the frontend's, on node-2
        assertThat(calc.addressConflicts()).isEmpty();
        assertThat(frontends()).containsExactly("10.244.2.7");
    }

    @Test
    void thePodBeforeItsNodeEndsTheSameAsTheNodeFirst() {
        calc.upsertPod(pod("mirror", "frontend", "node-3", LIAR, "10.244.3.9"));
        assertThat(frontends()).as("no ranges known yet: nothing to refuse by").contains(LIAR);

        calc.upsertNode(node("node-3", List.of("10.244.3.0/24"), "192.168.0.3"));
        assertThat(calc.drainChangedNodes()).contains("node-1", "node-3");
        NodeSnapshot podFirst1 = calc.snapshot("node-1");
        NodeSnapshot podFirst3 = calc.snapshot("node-3");

        PodAddressScopeTest other = new PodAddressScopeTest();
        other.world();
        other.calc.upsertNode(node("node-3", List.of("10.244.3.0/24"), "192.168.0.3"));
        other.calc.upsertPod(pod("mirror", "frontend", "node-3", LIAR, "10.244.3.9"));
        assertThat(podFirst1.toByteArray())
                .isEqualTo(other.calc.snapshot("node-1").toByteArray());
        assertThat(podFirst3.toByteArray())
                .isEqualTo(other.calc.snapshot("node-3").toByteArray());
        assertThat(calc.refusedAddresses()).isEqualTo(other.calc.refusedAddresses());
    }

    @Test
    void rangesThatChangeOrGoJudgeThePodsAgain() {
        calc.upsertNode(node("node-3", List.of("10.244.3.0/24")));
        calc.upsertPod(pod("mirror", "frontend", "node-3", "10.244.30.9"));
        assertThat(frontends()).containsExactly("10.244.2.7");

        calc.upsertNode(node("node-3", List.of("10.244.0.0/16")));
        assertThat(frontends()).containsExactlyInAnyOrder("10.244.2.7", "10.244.30.9");
        assertThat(calc.refusedAddresses()).isEmpty();

        calc.upsertNode(node("node-3", List.of("10.244.3.0/24")));
        assertThat(frontends()).containsExactly("10.244.2.7");
        calc.deleteNode("node-3");
        assertThat(frontends())
                .as("no Node, no ranges: nothing refused")
                .containsExactlyInAnyOrder("10.244.2.7", "10.244.30.9");

        calc.upsertNode(node("node-3", List.of("10.244.3.0/24")));
        calc.deletePod("shop", "mirror");
        assertThat(calc.refusedAddresses()).isEmpty();
    }
}
