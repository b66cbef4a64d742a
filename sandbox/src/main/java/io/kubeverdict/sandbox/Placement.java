// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.calc.NodeModel;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import io.kubeverdict.testbed.TestbedLayout;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where each pod runs and which addresses it has, which addresses each node has, and each node's
 * pod range; pure and deterministic, so a cluster can be replayed exactly.
 *
 * <p>Node objects define nodes and their addresses (status.addresses, as the calculation reads
 * them). A pod keeps the node and IPs its manifest gives. The others, in "namespace/name" order,
 * are spread round-robin over the Node objects (by name), or over "node-1".."node-N" when there are
 * none. Every node gets a pod range ({@link PodRanges}: its Node's spec.podCIDRs, else a subnet of
 * the pod CIDR when that fits the addresses the manifests give), and pods without addresses take
 * the lowest free ones of their node's range, by the rule of `matrix --assign-ips`
 * ({@link WhatIfDefaults#assignAddresses}). hostNetwork pods are placed too (they run their
 * servers in their node's namespace): their addresses are their node's — the podIPs the manifest
 * gives (which then are the node's addresses, if it has no Node object), else the Node's
 * addresses, else the node's fabric address in the testbed.
 *
 * @param nodeIps the nodes' own addresses (Node objects, hostNetwork pods' podIPs); nodes without are
 *     addressed by their fabric address
 * @param hostNetwork the placed hostNetwork pods
 * @param podRanges every node's pod range, and which of them the sandbox writes into the copy
 */
public record Placement(
        List<String> nodes,
        Map<String, String> nodeOf,
        Map<String, List<String>> ipsOf,
        Map<String, List<String>> nodeIps,
        Set<String> hostNetwork,
        PodRanges podRanges) {
    public static final String DEFAULT_POD_CIDR = "10.244.0.0/16";

    /** Without Node objects. */
    public static Placement of(List<Pod> pods, int spreadNodes, String podCidr) {
        return of(pods, List.of(), spreadNodes, podCidr);
    }

    /**
     * @param pods every Pod of the manifests, those the sandbox does not run too: they take
     *     addresses like in `matrix --assign-ips`, so the numbering does not depend on what runs
     * @param nodeObjects the Node objects of the manifests
     * @param spreadNodes how many nodes pods without a node are spread over when there are no Node objects
     * @param podCidr the cluster's pod range, split into the nodes' ranges
     * @throws IllegalArgumentException when podCidr is not a CIDR, is too small, or a pod is unusable
     *     (a hostNetwork pod whose podIPs are not its Node's addresses)
     */
    public static Placement of(List<Pod> pods, List<Node> nodeObjects, int spreadNodes, String podCidr) {
        List<Pod> sorted = pods.stream()
                .sorted(Comparator.comparing(p -> SandboxPod.of(p).name()))
                .toList();
        Map<String, List<String>> nodeIps = new TreeMap<>();
        Map<String, List<String>> givenRanges = new TreeMap<>();
        TreeSet<String> nodes = new TreeSet<>();
        for (Node n : nodeObjects) {
            NodeModel model = NodeModel.of(n);
            nodes.add(model.name());
            if (!model.addresses().isEmpty()) {
                nodeIps.put(model.name(), model.addresses());
            }
            if (!model.podCidrs().isEmpty()) {
                givenRanges.put(model.name(), model.podCidrs());
            }
        }
        List<String> spreadOver = new ArrayList<>(nodes);
        if (spreadOver.isEmpty()) {
            for (int i = 1; i <= spreadNodes; i++) {
                spreadOver.add("node-" + i);
            }
        }
        Map<String, String> nodeOf = new LinkedHashMap<>();
        Map<String, List<String>> ipsOf = new LinkedHashMap<>();
        Set<String> hostNetwork = new TreeSet<>();
        Map<String, List<String>> hostNetworkIps = new LinkedHashMap<>();
        Map<String, List<String>> givenPodIps = new TreeMap<>();
        int spread = 0;
        for (Pod p : sorted) {
            SandboxPod pod = SandboxPod.of(p);
            if (!pod.runnable() && !pod.hostNetwork()) {
                continue;
            }
            String node = pod.node() != null ? pod.node() : spreadOver.get(spread++ % spreadOver.size());
            nodes.add(node);
            nodeOf.put(pod.name(), node);
            if (!pod.hostNetwork()) {
                if (!pod.ips().isEmpty()) {
                    ipsOf.put(pod.name(), pod.ips());
                    givenPodIps.computeIfAbsent(node, n -> new ArrayList<>()).addAll(pod.ips());
                }
                continue;
            }
            hostNetwork.add(pod.name());
            if (!pod.ips().isEmpty()) {
                hostNetworkIps.put(pod.name(), pod.ips());
                List<String> known = nodeIps.putIfAbsent(node, pod.ips());
                if (known != null && !known.containsAll(pod.ips())) {
                    throw new IllegalArgumentException("hostNetwork pod " + pod.name() + " has podIPs " + pod.ips()
                            + ", which are not addresses of its node " + node + " " + known);
                }
            }
        }
        List<String> nodeList = new ArrayList<>(nodes);
        List<String> nodeAddresses = new ArrayList<>();
        nodeIps.values().forEach(nodeAddresses::addAll);
        for (int i = 0; i < nodeList.size(); i++) {
            nodeAddresses.add(TestbedLayout.fabricNodeAddress(i));
        }
        PodRanges ranges = PodRanges.plan(podCidr, nodeList, givenRanges, givenPodIps, nodeAddresses);
        // Pods without addresses take the lowest free ones of their node's range, by the rule of
        // `matrix --assign-ips` (every pod's given addresses count as taken).
        for (String node : nodeList) {
            List<Pod> candidates = sorted.stream()
                    .filter(p -> hasAddress(p)
                            || node.equals(nodeOf.get(SandboxPod.of(p).name())))
                    .toList();
            if (candidates.stream().noneMatch(p -> needsAddress(p, ipsOf, hostNetwork))) {
                continue;
            }
            String from = ranges.assignFrom(node, podCidr, nodeList.size());
            for (WhatIfDefaults.Assignment a : WhatIfDefaults.assignAddresses(candidates, from)) {
                ipsOf.put(a.pod(), List.of(a.ip()));
            }
        }
        for (String pod : hostNetwork) {
            String node = nodeOf.get(pod);
            // A node without addresses of its own is addressed by its fabric address in the testbed.
            ipsOf.put(
                    pod,
                    hostNetworkIps.getOrDefault(
                            pod,
                            nodeIps.getOrDefault(
                                    node, List.of(TestbedLayout.fabricNodeAddress(nodeList.indexOf(node))))));
        }
        Map<String, List<String>> ordered = new LinkedHashMap<>();
        nodeOf.keySet().forEach(pod -> ordered.put(pod, ipsOf.get(pod)));
        return new Placement(nodeList, nodeOf, ordered, nodeIps, hostNetwork, ranges);
    }

    private static boolean hasAddress(Pod p) {
        return !SandboxPod.of(p).ips().isEmpty();
    }

    private static boolean needsAddress(Pod p, Map<String, List<String>> ipsOf, Set<String> hostNetwork) {
        SandboxPod pod = SandboxPod.of(p);
        return pod.runnable() && !hostNetwork.contains(pod.name()) && !ipsOf.containsKey(pod.name());
    }
}
