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

/**
 * The sandbox gives every node a pod range that fits the manifests, and pods the addresses
 * `matrix --assign-ips` would give them in their node's range, to the last one of it.
 */
class PlacementTest {
    private static List<Pod> pods(String... names) {
        StringBuilder yaml = new StringBuilder();
        for (String name : names) {
            yaml.append("apiVersion: v1\nkind: Pod\nmetadata: {namespace: n, name: ")
                    .append(name)
                    .append("}\nspec: {containers: [{name: c}]}\n---\n");
        }
        return load(yaml.toString()).pods();
    }

    private static io.kubeverdict.controlplane.manifests.LoadedManifests load(String yaml) {
        try {
            return new ManifestLoader().loadText("pods.yaml", yaml);
        } catch (io.kubeverdict.controlplane.manifests.ManifestLoadException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, String> matrixAssigns(List<Pod> pods, String cidr) {
        return WhatIfDefaults.apply(new java.util.ArrayList<>(pods), cidr, "n").stream()
                .collect(Collectors.toMap(WhatIfDefaults.Assignment::pod, WhatIfDefaults.Assignment::ip));
    }

    @Test
    void everyNodeGetsASubnetAndItsPodsTheAddressesMatrixAssignIpsGivesInIt() {
        // 2 nodes: /30s (the default /24 does not fit 3 subnets in a /28); subnet 0 stays free.
        Placement placement = Placement.of(pods("a", "b", "c"), 2, "10.9.0.0/28");
        assertThat(placement.podRanges().of())
                .containsExactly(
                        Map.entry("node-1", List.of("10.9.0.4/30")), Map.entry("node-2", List.of("10.9.0.8/30")));
        assertThat(placement.podRanges().generated())
                .isEqualTo(placement.podRanges().of());
        assertThat(placement.podRanges().none()).isEmpty();
        assertThat(placement.nodeOf())
                .containsExactly(Map.entry("n/a", "node-1"), Map.entry("n/b", "node-2"), Map.entry("n/c", "node-1"));
        assertThat(placement.ipsOf())
                .containsExactly(
                        Map.entry("n/a", List.of("10.9.0.5")),
                        Map.entry("n/b", List.of("10.9.0.9")),
                        Map.entry("n/c", List.of("10.9.0.6")));
        assertThat(matrixAssigns(pods("a", "c"), "10.9.0.4/30"))
                .containsEntry("n/a", "10.9.0.5")
                .containsEntry("n/c", "10.9.0.6");
        // The default pod CIDR: node-i gets 10.244.i.0/24, as a cluster's node IPAM would give them.
        assertThat(Placement.of(pods("a", "b"), 2, Placement.DEFAULT_POD_CIDR).ipsOf())
                .containsEntry("n/a", List.of("10.244.1.1"))
                .containsEntry("n/b", List.of("10.244.2.1"));
    }

    @Test
    void aFullRangeIsAnErrorAsInMatrix() {
        // One node of 10.9.0.0/29: 10.9.0.4/30, three addresses after the network address.
        assertThat(Placement.of(pods("a", "b", "c"), 1, "10.9.0.0/29").ipsOf())
                .containsEntry("n/c", List.of("10.9.0.7"));
        assertThatThrownBy(() -> Placement.of(pods("a", "b", "c", "d"), 1, "10.9.0.0/29"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exhausted");
        assertThatThrownBy(() -> matrixAssigns(pods("a", "b", "c", "d"), "10.9.0.4/30"))
                .hasMessageContaining("exhausted");
        assertThatThrownBy(() -> Placement.of(pods("a"), 2, "10.9.0.0/31"))
                .hasMessageContaining("too small for a pod range per node");
    }

    @Test
    void ipv6RangesWorkAndNamesAreNotCidrs() {
        Placement placement = Placement.of(pods("a", "b"), 1, "fd00:9::/120");
        assertThat(placement.podRanges().of()).containsEntry("node-1", List.of("fd00:9::80/121"));
        assertThat(placement.ipsOf())
                .containsEntry("n/a", List.of("fd00:9::81"))
                .containsEntry("n/b", List.of("fd00:9::82"));
        assertThat(Placement.of(pods("a", "b"), 2, "fd00:9::/48").podRanges().of())
                .containsEntry("node-2", List.of("fd00:9:0:2::/64"));
        assertThatThrownBy(() -> Placement.of(pods("a"), 1, "localhost/24")).hasMessageContaining("not a CIDR");
    }

    @Test
    void aNodesOwnRangesAreKeptAndARangeIsOnlyGivenWhereTheManifestsAddressesFit() {
        var loaded = load("""
                apiVersion: v1
                kind: Node
                metadata: {name: given}
                spec: {podCIDRs: [10.7.0.0/24]}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: mixed}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: plain}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: n, name: g1}
                spec: {nodeName: given, containers: [{name: c}]}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: n, name: m1}
                spec: {nodeName: mixed, containers: [{name: c}]}
                status: {phase: Running, podIPs: [{ip: 10.244.5.9}]}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: n, name: m2}
                spec: {nodeName: mixed, containers: [{name: c}]}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: n, name: p1}
                spec: {nodeName: plain, containers: [{name: c}]}
                status: {phase: Running, podIPs: [{ip: 10.244.3.7}]}
                """);
        Placement placement = Placement.of(loaded.pods(), loaded.nodes(), 2, Placement.DEFAULT_POD_CIDR);
        // Sorted: given, mixed (index 1: 10.244.2.0/24), plain (index 2: 10.244.3.0/24).
        assertThat(placement.podRanges().of())
                .containsExactly(
                        Map.entry("given", List.of("10.7.0.0/24")), Map.entry("plain", List.of("10.244.3.0/24")));
        assertThat(placement.podRanges().generated()).containsOnlyKeys("plain");
        assertThat(placement.podRanges().none())
                .containsOnlyKeys("mixed")
                .hasEntrySatisfying(
                        "mixed",
                        why -> assertThat(why).contains("10.244.2.0/24").contains("10.244.5.9"));
        // Pods take their node's range; those of a node without one the free subnet 0.
        assertThat(placement.ipsOf())
                .containsEntry("n/g1", List.of("10.7.0.1"))
                .containsEntry("n/m2", List.of("10.244.0.1"))
                .containsEntry("n/p1", List.of("10.244.3.7"));
    }

    @Test
    void aRangeHoldingAnotherNodesPodOrANodeAddressIsNotGiven() {
        var loaded = load("""
                apiVersion: v1
                kind: Node
                metadata: {name: a}
                status: {addresses: [{type: InternalIP, address: 10.244.2.200}]}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: b}
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: c}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: n, name: on-c}
                spec: {nodeName: c, containers: [{name: c}]}
                status: {phase: Running, podIPs: [{ip: 10.244.1.5}]}
                """);
        Placement placement = Placement.of(loaded.pods(), loaded.nodes(), 2, Placement.DEFAULT_POD_CIDR);
        assertThat(placement.podRanges().of()).isEmpty();
        assertThat(placement.podRanges().none().get("a"))
                .contains("10.244.1.0/24")
                .contains("a pod of c has 10.244.1.5");
        assertThat(placement.podRanges().none().get("b")).contains("node address 10.244.2.200");
        assertThat(placement.podRanges().none().get("c")).contains("10.244.1.5, outside it");
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
