// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.ServePort;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What to run: the manifest directory, how many nodes pods without spec.nodeName are spread over,
 * which ports to probe (empty: every container port of the pods), the pod CIDR for pods without
 * IPs, the probe timeout, the namespace name prefix, and extra agent arguments per node (e.g.
 * {@code --fail-open} for one node of a fault test; a restarted agent gets them again).
 */
public record SandboxOptions(
        Path manifests,
        int nodes,
        List<ServePort> probes,
        String podCidr,
        Duration probeTimeout,
        String prefix,
        Map<String, List<String>> agentArgs) {
    public static final String DEFAULT_PREFIX = "kvsb-";

    public SandboxOptions {
        probes = List.copyOf(probes);
        Map<String, List<String>> args = new LinkedHashMap<>();
        agentArgs.forEach((node, list) -> args.put(node, List.copyOf(list)));
        agentArgs = Map.copyOf(args);
        if (nodes < 1) {
            throw new IllegalArgumentException("--nodes must be at least 1");
        }
    }

    public SandboxOptions(
            Path manifests, int nodes, List<ServePort> probes, String podCidr, Duration probeTimeout, String prefix) {
        this(manifests, nodes, probes, podCidr, probeTimeout, prefix, Map.of());
    }

    /** These options with extra arguments for node's agent. */
    public SandboxOptions withAgentArgs(String node, String... args) {
        Map<String, List<String>> all = new LinkedHashMap<>(agentArgs);
        all.put(node, List.of(args));
        return new SandboxOptions(manifests, nodes, probes, podCidr, probeTimeout, prefix, all);
    }

    /** The extra arguments of node's agent (none by default). */
    public List<String> agentArgs(String node) {
        return agentArgs.getOrDefault(node, List.of());
    }

    /** The probes: those asked for, else every TCP/UDP/SCTP container port of the pods (by protocol, then port). */
    public List<ServePort> targets(List<SandboxPod> pods) {
        if (!probes.isEmpty()) {
            return probes;
        }
        Set<ServePort> all = new LinkedHashSet<>();
        pods.stream()
                .flatMap(p -> p.ports().stream())
                .sorted(Comparator.comparing(ServePort::protocol).thenComparingInt(ServePort::port))
                .forEach(all::add);
        return new ArrayList<>(all);
    }
}
