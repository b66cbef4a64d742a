// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** `kube-verdict whatif`: a history of netpol-basic's real verdicts replayed through changed manifests. */
class WhatIfCommandTest {
    @TempDir
    Path dir;

    private Path proposed;
    private Path flows;

    @BeforeEach
    void recordAHistoryAndCopyTheExample() throws Exception {
        flows = ExampleHistory.write(
                dir.resolve("flows.json"),
                List.of(
                        new ExampleHistory.Connection("10.244.2.10", "10.244.1.10", 6, 80), // y/a -> x/a allowed
                        new ExampleHistory.Connection("10.244.3.10", "10.244.1.10", 6, 80), // z/a -> x/a denied
                        new ExampleHistory.Connection("10.244.1.10", "10.244.1.11", 6, 80), // x/a -> x/b allowed
                        new ExampleHistory.Connection("10.244.1.12", "10.244.1.11", 6, 80), // x/c -> x/b allowed
                        new ExampleHistory.Connection("10.244.1.12", "10.244.1.11", 6, 80)));
        proposed = ExampleHistory.copyExample(dir.resolve("proposed"));
    }

    private LiveCommandsTest.Run whatif(String... more) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = new java.util.ArrayList<>(
                List.of("whatif", "--manifests", proposed.toString(), "--flows", flows.toString()));
        args.addAll(List.of(more));
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args.toArray(String[]::new));
        return new LiveCommandsTest.Run(exit, out.toString(), err.toString());
    }

    private void edit(String from, String to) throws Exception {
        Path p = proposed.resolve("policies.yaml");
        String before = Files.readString(p);
        assertThat(before).contains(from);
        Files.writeString(p, before.replace(from, to));
    }

    @Test
    void theStateTheHistoryWasRecordedInFlipsNothing() {
        var run = whatif();
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.out()).contains("0 of 4 flows would flip");
    }

    @Test
    void aNarrowedPolicyNamesExactlyTheFlowItDenies() throws Exception {
        // allow-b-from-x: from x/a only, so x/c -> x/b is denied.
        edit(
                "  podSelector:\n    matchLabels: {pod: b}\n  ingress:\n    - from:\n        - podSelector: {}",
                "  podSelector:\n    matchLabels: {pod: b}\n  ingress:\n    - from:\n        - podSelector:\n"
                        + "            matchLabels: {pod: a}");
        var run = whatif();
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
        List<String> lines = run.out().lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(1))
                .contains("x/c")
                .contains("x/b")
                .contains("80/TCP")
                .contains("allowed (ingress x/allow-b-from-x ingress[0])")
                .contains("denied (ingress default of tier default (no rule matched))");
        assertThat(lines.get(2)).startsWith("1 of 4 flows would flip (2 recorded verdicts)");
        JsonNode json =
                JsonMapper.builder().build().readTree(whatif("-o", "json").out());
        assertThat(json.get("flips")).hasSize(1);
        assertThat(json.get("flips").get(0).get("after").get("sourcePod").asString())
                .isEqualTo("x/c");
    }

    @Test
    void aDeletedPolicyFlipsWhatItAllowed() throws Exception {
        String text = Files.readString(proposed.resolve("policies.yaml"));
        int start = text.indexOf("# ... except x/a from namespace y");
        int end = text.indexOf("# ... and x/b from any pod of x");
        Files.writeString(proposed.resolve("policies.yaml"), text.substring(0, start) + text.substring(end));
        var run = whatif();
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).contains("y/a").contains("allowed (ingress x/allow-a-from-y-web ingress[0])");
        assertThat(run.out()).contains("1 of 4 flows would flip");
    }

    @Test
    void aDirectoryThatDoesNotLoadExitsTwoWithFileAndLine() throws Exception {
        Files.writeString(proposed.resolve("broken.yaml"), "kind: NetworkPolicy\nmetadata: [\n");
        var run = whatif();
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("broken.yaml:");
    }

    @Test
    void aWorkloadMissingFromTheProposedStateIsReportedNotGuessed() throws Exception {
        String pods = Files.readString(proposed.resolve("pods.yaml"));
        // Renaming x/c (and its label) leaves its recorded flow without a pod to replay it as.
        Files.writeString(
                proposed.resolve("pods.yaml"),
                pods.replace(
                        "  namespace: x\n  name: c\n  labels:\n    pod: c",
                        "  namespace: x\n  name: d\n  labels:\n    pod: d"));
        var run = whatif();
        assertThat(run.exit()).as(run.out() + run.err()).isZero();
        assertThat(run.err()).contains("not replayed").contains("x/c -> x/b 80/TCP");
    }
}
