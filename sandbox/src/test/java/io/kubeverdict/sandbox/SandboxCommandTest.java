// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.sandbox.cli.KubeVerdictMain;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** `sandbox` as an operator runs it: the default example, real processes, JSON checked against its documented shape. */
@EndToEndTest
class SandboxCommandTest {
    private static final JsonMapper JSON = new JsonMapper();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(String line) {
        return JSON.readValue(line, java.util.LinkedHashMap.class);
    }

    @Test
    void defaultExampleAgreesWithTheEngineAndJsonHasTheDocumentedShape() throws Exception {
        Path example = Launcher.home().resolve("deploy/examples/netpol-basic");
        assertThat(example).isDirectory();
        // No --manifests: what `bin/kube-verdict sandbox` runs.
        runAndCheckJson();
    }

    @SuppressWarnings("unchecked")
    private void runAndCheckJson(String... extra) throws Exception {
        TestLaunch.useTestClassPath();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = new java.util.ArrayList<>(List.of(
                "sandbox",
                "--output",
                "json",
                "--probe",
                "80/TCP",
                "--probe",
                "81/UDP",
                "--probe",
                "80/SCTP",
                "--prefix",
                "kvt-sb-",
                "--probe-timeout",
                "1200"));
        args.addAll(List.of(extra));
        int code = KubeVerdictMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args.toArray(String[]::new));
        assertThat(code).as("exit code; stderr:\n" + err + "\nstdout:\n" + out).isZero();

        List<String> lines = out.toString().lines().toList();
        assertThat(lines).hasSize(3);
        String[] probes = {"80/TCP", "81/UDP", "80/SCTP"};
        for (int i = 0; i < lines.size(); i++) {
            Map<String, Object> probe = parse(lines.get(i));
            assertThat(probe.get("port") + "/" + probe.get("protocol")).isEqualTo(probes[i]);
            List<String> pods = (List<String>) probe.get("pods");
            assertThat(pods).isNotEmpty().isSorted().allMatch(p -> p.matches("[a-z0-9-]+/[a-z0-9.-]+"));
            assertThat((List<Object>) probe.get("mismatches")).isEmpty();
            Map<String, Map<String, Boolean>> expected = (Map<String, Map<String, Boolean>>) probe.get("expected");
            assertThat(expected.keySet()).containsExactlyElementsOf(pods);
            expected.values().forEach(row -> assertThat(row.keySet()).containsExactlyElementsOf(pods));
            if (probes[i].endsWith("SCTP")) {
                assertThat(probe).containsEntry("observed", null).containsKey("unsupported");
                assertThat(probe.keySet())
                        .containsExactly(
                                "port", "protocol", "pods", "expected", "observed", "unsupported", "mismatches");
            } else {
                assertThat(probe.keySet())
                        .containsExactly("port", "protocol", "pods", "expected", "observed", "mismatches");
                Map<String, Map<String, Boolean>> observed = (Map<String, Map<String, Boolean>>) probe.get("observed");
                assertThat(observed.keySet()).containsExactlyElementsOf(pods);
                // No mismatches: observed equals expected off the loopback diagonal.
                for (String from : pods) {
                    for (String to : pods) {
                        if (!from.equals(to)) {
                            assertThat(observed.get(from).get(to))
                                    .as(from + " -> " + to)
                                    .isEqualTo(expected.get(from).get(to));
                        }
                    }
                }
            }
        }
        // The example is meant to show policies at work: something is denied.
        Map<String, Map<String, Boolean>> tcp =
                (Map<String, Map<String, Boolean>>) parse(lines.get(0)).get("expected");
        assertThat(tcp.values()).anyMatch(row -> row.containsValue(false));
        assertThat(err.toString())
                .contains("waiting until every agent is in sync")
                .contains("tearing down");
        // Everything it made is gone.
        try (var left = Files.list(Path.of("/run/netns"))) {
            assertThat(left.map(p -> p.getFileName().toString())
                            .filter(n -> n.startsWith(
                                    "kvt-sb-" + ProcessHandle.current().pid() + "-")))
                    .isEmpty();
        }
    }

    @Test
    void ipv6PodsOnTwoNodesInTableForm() throws Exception {
        TestLaunch.useTestClassPath();
        // x/a (node-1) admits only x/b (node-2): IPv6-only pods, a same-node deny, a cross-node allow.
        Path manifests = Path.of(getClass().getResource("/sandbox/ipv6").toURI());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = KubeVerdictMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(
                        "sandbox",
                        "--manifests",
                        manifests.toString(),
                        "--prefix",
                        "kvt-sb-",
                        "--probe-timeout",
                        "1200");
        assertThat(code).as("exit code; stderr:\n" + err + "\nstdout:\n" + out).isZero();
        assertThat(out.toString())
                .contains("80/TCP: observed == expected (6 pairs)")
                .containsPattern("x/c +X +\\. +\\.\\s+x/c +X +\\. +\\.");
    }

    @Test
    void knowsWhetherItRunsAsRoot() {
        assertThat(RootCheck.effectiveUidIsRoot(List.of("Name:\tjava", "Uid:\t0\t0\t0\t0")))
                .isTrue();
        assertThat(RootCheck.effectiveUidIsRoot(List.of("Uid:\t1000\t1000\t1000\t1000")))
                .isFalse();
        assertThat(RootCheck.effectiveUidIsRoot(List.of("Uid:\t0\t1000\t0\t0"))).isFalse();
    }
}
