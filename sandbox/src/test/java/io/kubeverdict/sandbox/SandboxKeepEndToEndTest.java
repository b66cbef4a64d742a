// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What `sandbox --keep` prints for the CLI works as printed: every recipe line is run by a shell,
 * as a user pastes it, against the sandbox's real control plane and agents (the default example).
 */
@EndToEndTest
class SandboxKeepEndToEndTest {
    @Test
    void everyPrintedCliCommandAnswersAboutTheSandbox() throws Exception {
        TestLaunch.useTestClassPath();
        Path example = Launcher.home().resolve("deploy/examples/netpol-basic");
        try (Sandbox sandbox = Sandbox.start(
                new SandboxOptions(
                        example,
                        2,
                        List.of(ServePort.parse("80/TCP")),
                        Placement.DEFAULT_POD_CIDR,
                        Duration.ofMillis(1200),
                        "kvt-sk-"),
                new Progress(new java.io.PrintWriter(System.err, true)))) {
            String help = sandbox.accessHelp();
            assertThat(help).doesNotContain("grpcurl");
            List<String> recipes = help.lines()
                    .filter(l -> l.startsWith(CliRecipes.INDENT + "ip netns exec") && l.contains(" --control-plane "))
                    .map(String::strip)
                    .toList();
            for (String command : List.of("status", "matrix", "policies", "explain", "observe", "wait")) {
                assertThat(recipes).as(help).anyMatch(l -> l.contains(" " + command + " "));
            }
            for (String recipe : recipes) {
                Path out = Files.createTempFile("kvt-sk-", ".out");
                try {
                    Process p = new ProcessBuilder("sh", "-c", recipe)
                            .redirectErrorStream(true)
                            .redirectOutput(out.toFile())
                            .start();
                    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(recipe).isTrue();
                    String output = Files.readString(out, StandardCharsets.UTF_8);
                    // explain exits 1 for a denied connection; everything else 0 on a converged sandbox.
                    assertThat(p.exitValue())
                            .as(recipe + "\n" + output)
                            .isIn(recipe.contains(" explain ") ? List.of(0, 1) : List.of(0));
                    assertThat(output).as(recipe).isNotBlank().doesNotContain("UNAVAILABLE");
                } finally {
                    Files.deleteIfExists(out);
                }
            }
        }
    }
}
