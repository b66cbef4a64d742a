// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.TestbedLayout;
import java.net.InetAddress;
import java.nio.file.Path;

/** How to reach each process and pod of a running sandbox (`sandbox --keep`); the CLI: {@link CliRecipes}. */
final class AccessHelp {
    private AccessHelp() {}

    static String render(TestbedLayout l, SandboxProcesses processes, Path copy, Path source) {
        String fab = "ip netns exec " + l.fabricNamespace();
        ManagedProcess cp = processes.controlPlane();
        StringBuilder s = new StringBuilder();
        s.append("control plane  pid ")
                .append(cp.pid())
                .append("  log ")
                .append(cp.log())
                .append('\n')
                .append("  ")
                .append(fab)
                .append(" curl -s http://")
                .append(l.fabricAddress())
                .append(':')
                .append(SandboxProcesses.CONTROL_PLANE_METRICS_PORT)
                .append("/metrics\n");
        processes
                .agents()
                .forEach((node, p) -> s.append("agent ")
                        .append(node)
                        .append("  pid ")
                        .append(p.pid())
                        .append("  netns ")
                        .append(l.nodeNamespace(node))
                        .append("  log ")
                        .append(p.log())
                        .append('\n')
                        .append("  ")
                        .append(fab)
                        .append(" curl -s http://")
                        .append(l.nodeAddress(node))
                        .append(':')
                        .append(SandboxProcesses.AGENT_METRICS_PORT)
                        .append("/metrics\n")
                        .append("  ip netns exec ")
                        .append(l.nodeNamespace(node))
                        .append(" nft list ruleset\n"));
        s.append("pods:\n");
        for (PodSpec pod : l.pods()) {
            s.append("  ")
                    .append(pod.name())
                    .append(' ')
                    .append(pod.ips().stream().map(InetAddress::getHostAddress).toList())
                    .append(" on ")
                    .append(pod.node())
                    .append(": ip netns exec ")
                    .append(l.podNamespace(pod.name()))
                    .append(" <command>\n");
        }
        s.append("the control plane watches ")
                .append(copy)
                .append(" (a copy of ")
                .append(source)
                .append(" with nodes and IPs)\n");
        return s.toString();
    }
}
