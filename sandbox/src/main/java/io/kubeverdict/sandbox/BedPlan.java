// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.ServePort;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The pods of the testbed: every pod the sandbox runs on its placed node with its placed
 * addresses, serving its container ports and every probed port, so an unserved port never hides
 * a verdict; hostNetwork pods in their node's namespace, where the agent listens too.
 */
final class BedPlan {
    /** Ports of the agent in every node's namespace, which a hostNetwork pod cannot serve. */
    private static final Set<ServePort> AGENT_PORTS = Set.of(
            new ServePort(SandboxProcesses.AGENT_METRICS_PORT, Protocol.TCP),
            new ServePort(SandboxProcesses.AGENT_INSPECT_PORT, Protocol.TCP));

    private BedPlan() {}

    static List<PodSpec> pods(List<SandboxPod> pods, Placement placement, List<ServePort> targets) {
        List<PodSpec> specs = new ArrayList<>();
        for (SandboxPod pod : pods) {
            Set<ServePort> ports = new LinkedHashSet<>(pod.ports());
            ports.addAll(targets);
            boolean hostNetwork = placement.hostNetwork().contains(pod.name());
            if (hostNetwork) {
                ports.stream().filter(AGENT_PORTS::contains).findFirst().ifPresent(p -> {
                    throw new SandboxException("hostNetwork pod " + pod.name() + " would serve " + p
                            + ", which the agent uses in its node's namespace");
                });
            }
            List<InetAddress> ips = placement.ipsOf().get(pod.name()).stream()
                    .map(PodSpec::address)
                    .toList();
            specs.add(new PodSpec(
                    pod.name(), placement.nodeOf().get(pod.name()), ips, new ArrayList<>(ports), hostNetwork));
        }
        return specs;
    }

    /** The nodes' own addresses, for the testbed. */
    static Map<String, List<InetAddress>> nodeIps(Placement placement) {
        Map<String, List<InetAddress>> out = new LinkedHashMap<>();
        placement
                .nodeIps()
                .forEach((node, ips) ->
                        out.put(node, ips.stream().map(PodSpec::address).toList()));
        return out;
    }

    /** The ports servers listen on, for the progress output (SCTP is not served here). */
    static String served(List<ServePort> targets) {
        return targets.stream()
                .filter(p -> p.protocol() != Protocol.SCTP)
                .map(ServePort::toString)
                .toList()
                .toString();
    }
}
