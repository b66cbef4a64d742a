package io.kubeverdict.sandbox;

import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.ServePort;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The pods of the testbed: every pod the sandbox runs on its placed node with its placed
 * addresses, serving its container ports and every probed port, so an unserved port never hides
 * a verdict.
 */
final class BedPlan {
    private BedPlan() {}

    static List<PodSpec> pods(List<SandboxPod> pods, Placement placement, List<ServePort> targets) {
        List<PodSpec> specs = new ArrayList<>();
        for (SandboxPod pod : pods) {
            Set<ServePort> ports = new LinkedHashSet<>(pod.ports());
            ports.addAll(targets);
            List<InetAddress> ips = placement.ipsOf().get(pod.name()).stream().map(PodSpec::address).toList();
            specs.add(new PodSpec(pod.name(), placement.nodeOf().get(pod.name()), ips, new ArrayList<>(ports)));
        }
        return specs;
    }

    /** The ports servers listen on, for the progress output (SCTP is not served here). */
    static String served(List<ServePort> targets) {
        return targets.stream().filter(p -> p.protocol() != Protocol.SCTP).map(ServePort::toString).toList().toString();
    }
}
