// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.TestbedLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The live CLI commands against a kept sandbox, each a line to paste as it is: the sandbox's
 * control plane listens on its own address and port in the fabric namespace, not on the CLI's
 * default localhost:9443. SandboxKeepEndToEndTest runs every line this prints.
 */
final class CliRecipes {
    /** What each line starts with, for the test that runs them. */
    static final String INDENT = "  ";

    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9_./:=@%+,-]+");

    private CliRecipes() {}

    static String render(TestbedLayout l, SandboxProcesses processes, List<ServePort> probes, Optional<String> policy) {
        String address = processes.controlPlaneAddress();
        List<String> prefix = new ArrayList<>(List.of("ip", "netns", "exec", l.fabricNamespace()));
        prefix.addAll(processes.userCli());
        List<PodSpec> pods = l.pods().stream().filter(p -> !p.hostNetwork()).toList();
        ServePort probe = probes.isEmpty() ? ServePort.parse("80/TCP") : probes.get(0);
        List<List<String>> commands = new ArrayList<>();
        commands.add(List.of("status"));
        commands.add(List.of("status", "--policies"));
        commands.add(List.of(
                "matrix",
                "--port",
                String.valueOf(probe.port()),
                "--protocol",
                probe.protocol().name()));
        if (!pods.isEmpty()) {
            String from = pods.get(0).name();
            String to = pods.get(pods.size() > 1 ? 1 : 0).name();
            commands.add(List.of("policies", to));
            commands.add(List.of(
                    "explain",
                    "--from",
                    from,
                    "--to",
                    to,
                    "--port",
                    String.valueOf(probe.port()),
                    "--protocol",
                    probe.protocol().name()));
        }
        commands.add(List.of("observe", "--count", "10", "--wait", "5s"));
        policy.ifPresent(p -> commands.add(List.of("wait", "--for=enforced", p, "--timeout", "60s")));
        StringBuilder s = new StringBuilder("kube-verdict against this sandbox (its control plane listens on ")
                .append(address)
                .append(" in network namespace ")
                .append(l.fabricNamespace())
                .append("; observe -f follows):\n");
        for (List<String> command : commands) {
            List<String> words = new ArrayList<>(prefix);
            words.addAll(command);
            words.addAll(List.of("--control-plane", address));
            s.append(INDENT)
                    .append(String.join(
                            " ", words.stream().map(CliRecipes::quoted).toList()))
                    .append('\n');
        }
        return s.toString();
    }

    /** A word as a POSIX shell reads it back. */
    static String quoted(String word) {
        return PLAIN.matcher(word).matches() ? word : "'" + word.replace("'", "'\\''") + "'";
    }
}
