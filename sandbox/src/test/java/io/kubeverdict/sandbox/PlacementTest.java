// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The sandbox gives pods the addresses `matrix --assign-ips` gives them, to the last one of the range. */
class PlacementTest {
    private static List<Pod> pods(String... names) {
        StringBuilder yaml = new StringBuilder();
        for (String name : names) {
            yaml.append("apiVersion: v1\nkind: Pod\nmetadata: {namespace: n, name: ")
                    .append(name)
                    .append("}\nspec: {containers: [{name: c}]}\n---\n");
        }
        try {
            return new ManifestLoader().loadText("pods.yaml", yaml.toString()).pods();
        } catch (io.kubeverdict.controlplane.manifests.ManifestLoadException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, String> matrixAssigns(List<Pod> pods, String cidr) {
        return WhatIfDefaults.apply(new java.util.ArrayList<>(pods), cidr, "n").stream()
                .collect(Collectors.toMap(WhatIfDefaults.Assignment::pod, WhatIfDefaults.Assignment::ip));
    }

    @Test
    void sameAddressesAsMatrixAssignIpsUpToTheLastOfTheRange() {
        Placement placement = Placement.of(pods("a", "b", "c"), 2, "10.9.0.0/30");
        assertThat(placement.ipsOf())
                .containsExactly(
                        Map.entry("n/a", List.of("10.9.0.1")),
                        Map.entry("n/b", List.of("10.9.0.2")),
                        Map.entry("n/c", List.of("10.9.0.3")));
        placement
                .ipsOf()
                .forEach((pod, ips) -> assertThat(matrixAssigns(pods("a", "b", "c"), "10.9.0.0/30"))
                        .containsEntry(pod, ips.get(0)));
        assertThat(placement.nodeOf())
                .containsExactly(Map.entry("n/a", "node-1"), Map.entry("n/b", "node-2"), Map.entry("n/c", "node-1"));
    }

    @Test
    void aFullRangeIsAnErrorAsInMatrix() {
        assertThatThrownBy(() -> Placement.of(pods("a", "b", "c", "d"), 1, "10.9.0.0/30"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exhausted");
        assertThatThrownBy(() -> matrixAssigns(pods("a", "b", "c", "d"), "10.9.0.0/30"))
                .hasMessageContaining("exhausted");
    }

    @Test
    void ipv6RangesWorkAndNamesAreNotCidrs() {
        assertThat(Placement.of(pods("a", "b"), 1, "fd00:9::/120").ipsOf())
                .containsEntry("n/a", List.of("fd00:9::1"))
                .containsEntry("n/b", List.of("fd00:9::2"));
        assertThatThrownBy(() -> Placement.of(pods("a"), 1, "localhost/24")).hasMessageContaining("not a CIDR");
    }

    private static final String CLUSTER = """
            apiVersion: v1
            kind: Node
            metadata: {name: w2}
            status: {addresses: [{type: InternalIP, address: 10.5.0.2}, {type: Hostname, address: w2}]}
            ---
            apiVersion: v1
            kind: Node
            metadata: {name: w1}
            status: {addresses: [{type: InternalIP, address: 10.5.0.1}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: n, name: kept}
            spec: {nodeName: w2, containers: [{name: c}]}
            status: {phase: Running, podIPs: [{ip: 10.9.0.77}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: n, name: spread}
            spec: {containers: [{name: c}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: h, name: on-w2}
            spec: {nodeName: w2, hostNetwork: true, containers: [{name: c}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: h, name: on-w3}
            spec: {nodeName: w3, hostNetwork: true, containers: [{name: c}]}
            status: {podIPs: [{ip: 10.5.0.3}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: h, name: on-w4}
            spec: {nodeName: w4, hostNetwork: true, containers: [{name: c}]}
            """;

    @Test
    void nodeObjectsDefineTheNodesAndTheirAddressesAndManifestPlacementsAreKept() throws Exception {
        var loaded = new ManifestLoader().loadText("cluster.yaml", CLUSTER);
        Placement placement = Placement.of(loaded.pods(), loaded.nodes(), 5, "10.9.0.0/24");
        // Node objects, and the nodes pods name; --nodes is not used when there are Node objects.
        assertThat(placement.nodes()).containsExactly("w1", "w2", "w3", "w4");
        assertThat(placement.nodeOf()).containsEntry("n/kept", "w2").containsEntry("n/spread", "w1");
        assertThat(placement.ipsOf()).containsEntry("n/kept", List.of("10.9.0.77"));
        // hostNetwork pods take their node's addresses: the Node's, their own podIPs (then the node's), or the
        // fabric's.
        assertThat(placement.hostNetwork()).containsExactly("h/on-w2", "h/on-w3", "h/on-w4");
        assertThat(placement.ipsOf())
                .containsEntry("h/on-w2", List.of("10.5.0.2"))
                .containsEntry("h/on-w3", List.of("10.5.0.3"))
                .containsEntry("h/on-w4", List.of(io.kubeverdict.testbed.TestbedLayout.fabricNodeAddress(3)));
        assertThat(placement.nodeIps())
                .containsExactly(
                        Map.entry("w1", List.of("10.5.0.1")),
                        Map.entry("w2", List.of("10.5.0.2")),
                        Map.entry("w3", List.of("10.5.0.3")));
    }

    @Test
    void aHostNetworkPodThatIsNotAtItsNodesAddressIsRefused() throws Exception {
        var loaded = new ManifestLoader()
                .loadText(
                        "cluster.yaml",
                        CLUSTER.replace("ip: 10.5.0.3", "ip: 10.5.0.1").replace("nodeName: w3", "nodeName: w2"));
        assertThatThrownBy(() -> Placement.of(loaded.pods(), loaded.nodes(), 1, "10.9.0.0/24"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "hostNetwork pod h/on-w3 has podIPs [10.5.0.1], which are not addresses of its node w2");
    }
}
