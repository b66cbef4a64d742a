package io.kubeverdict.sandbox;

import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Where each pod runs and which addresses it has; pure and deterministic. A pod keeps the node
 * and IPs its manifest gives. The others, in "namespace/name" order, are spread round-robin over
 * nodes "node-1".."node-N" and take addresses of the pod CIDR by the one rule of
 * `matrix --assign-ips` ({@link WhatIfDefaults#assignAddresses}).
 */
public record Placement(List<String> nodes, Map<String, String> nodeOf, Map<String, List<String>> ipsOf) {
    public static final String DEFAULT_POD_CIDR = "10.244.0.0/16";

    /**
     * @param pods every Pod of the manifests, those the sandbox does not run too: they take
     *     addresses like in `matrix --assign-ips`, so the numbering does not depend on what runs
     * @throws IllegalArgumentException when podCidr is not a CIDR, is too small, or a pod is unusable
     */
    public static Placement of(List<Pod> pods, int spreadNodes, String podCidr) {
        List<Pod> sorted = pods.stream().sorted(Comparator.comparing(p -> SandboxPod.of(p).name())).toList();
        Map<String, String> assigned = new LinkedHashMap<>();
        WhatIfDefaults.assignAddresses(sorted, podCidr).forEach(a -> assigned.put(a.pod(), a.ip()));
        TreeSet<String> nodes = new TreeSet<>();
        Map<String, String> nodeOf = new LinkedHashMap<>();
        Map<String, List<String>> ipsOf = new LinkedHashMap<>();
        int spread = 0;
        for (Pod p : sorted) {
            SandboxPod pod = SandboxPod.of(p);
            if (!pod.runnable()) {
                continue;
            }
            String node = pod.node() != null ? pod.node() : "node-" + (spread++ % spreadNodes + 1);
            nodes.add(node);
            nodeOf.put(pod.name(), node);
            ipsOf.put(pod.name(), pod.ips().isEmpty() ? List.of(assigned.get(pod.name())) : pod.ips());
        }
        return new Placement(new ArrayList<>(nodes), nodeOf, ipsOf);
    }
}
