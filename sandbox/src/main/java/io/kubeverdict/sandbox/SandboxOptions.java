package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.ServePort;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What to run: the manifest directory, how many nodes pods without spec.nodeName are spread over,
 * which ports to probe (empty: every container port of the pods), the pod CIDR for pods without
 * IPs, the probe timeout and the namespace name prefix.
 */
public record SandboxOptions(Path manifests, int nodes, List<ServePort> probes, String podCidr, Duration probeTimeout,
                             String prefix) {
    public static final String DEFAULT_PREFIX = "kvsb-";

    public SandboxOptions {
        probes = List.copyOf(probes);
        if (nodes < 1) {
            throw new IllegalArgumentException("--nodes must be at least 1");
        }
    }

    /** The probes: those asked for, else every TCP/UDP/SCTP container port of the pods (by protocol, then port). */
    public List<ServePort> targets(List<SandboxPod> pods) {
        if (!probes.isEmpty()) {
            return probes;
        }
        Set<ServePort> all = new LinkedHashSet<>();
        pods.stream().flatMap(p -> p.ports().stream())
                .sorted(Comparator.comparing(ServePort::protocol).thenComparingInt(ServePort::port)).forEach(all::add);
        return new ArrayList<>(all);
    }
}
