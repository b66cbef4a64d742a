// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.Durations;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code kube-verdict wait --for=enforced} as a CI pipeline runs it, a process of its own, against
 * the sandbox's real control plane and agents: it returns once the agents have applied the policy
 * and not before. An agent paused with SIGSTOP holds it back, and wait names its node; once the
 * agent runs again, wait returns.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class WaitEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final String POLICY = "networkpolicy/x/deny-ingress";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: "y"}
            """ + LifecycleEndToEndTest.pod("x", "a", "node-1", "10.244.1.10", "Running")
            + LifecycleEndToEndTest.pod("x", "b", "node-2", "10.244.2.10", "Running")
            + LifecycleEndToEndTest.pod("y", "a", "node-1", "10.244.1.20", "Running");

    private Path manifests;
    private Sandbox sandbox;

    /** A deny-ingress in x (x/a on node-1, x/b on node-2) that admits pods labelled v=version. */
    static String policies(String version) {
        return "---\n" + NetpolEndToEndTest.policy("x", "deny-ingress", """
                podSelector: {}
                policyTypes: [Ingress]
                ingress:
                - from:
                  - podSelector: {matchLabels: {v: "%s"}}
                """.formatted(version));
    }

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-wait-");
        Files.writeString(manifests.resolve("cluster.yaml"), CLUSTER);
        Files.writeString(manifests.resolve("policies.yaml"), policies("1"));
        sandbox = Sandbox.start(
                new SandboxOptions(
                                manifests,
                                2,
                                List.of(TCP80),
                                Placement.DEFAULT_POD_CIDR,
                                Duration.ofMillis(1200),
                                "kvt-sw-")
                        // Heartbeats every second (default 20 s): an idle node's last contact moves soon.
                        .withAgentArgs("node-1", "--heartbeat-interval", "1s")
                        .withAgentArgs("node-2", "--heartbeat-interval", "1s"),
                new Progress(new java.io.PrintWriter(System.err, true)));
    }

    @AfterAll
    void stop() throws Exception {
        if (sandbox != null) {
            sandbox.close();
        }
        try (Stream<Path> walk = Files.walk(manifests)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    record Run(int exit, String out, String err) {}

    /** A CLI process, started. */
    private record Cli(Process process, Path out, Path err) {
        Run finish(Duration timeout) throws Exception {
            assertThat(process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the CLI ended")
                    .isTrue();
            return new Run(
                    process.exitValue(),
                    Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        }
    }

    private Cli start(String subcommand, String... args) throws IOException {
        Path out = Files.createTempFile(manifests, "cli-", ".out");
        Path err = Files.createTempFile(manifests, "cli-", ".err");
        Process p = new ProcessBuilder(sandbox.cliCommand(subcommand, args))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        return new Cli(p, out, err);
    }

    private Run run(String subcommand, String... args) throws Exception {
        return start(subcommand, args).finish(Duration.ofSeconds(120));
    }

    /** Writes the policies and waits until the control plane has published them (not until agents apply). */
    private void write(String version) throws Exception {
        Files.writeString(manifests.resolve("policies.yaml"), policies(version));
        assertThat(sandbox.update()).isTrue();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!sandbox.inspection().listNodes().getSourceRevision().equals(sandbox.revision())) {
            assertThat(System.nanoTime() - end)
                    .as("control plane publishes the change")
                    .isNegative();
            Thread.sleep(50);
        }
    }

    private static void signal(ManagedProcess p, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid())).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }

    @Test
    void waitReturnsAfterTheAgentsApplyAndAPausedAgentHoldsItBackByName() throws Exception {
        Run ready = run("wait", "--for=enforced", POLICY, "--timeout=60s");
        assertThat(ready.exit()).as(ready.err()).isZero();
        assertThat(ready.out()).contains(POLICY + " enforced on 2/2 nodes");

        ManagedProcess paused = sandbox.agent("node-2");
        signal(paused, "STOP");
        try {
            write("2");
            sandbox.awaitConverged(List.of("node-1"));
            Cli waiting = start("wait", "--for=enforced", POLICY, "--timeout=180s");

            Run timedOut = run(
                    "wait", "--for=enforced", POLICY, "--timeout=20s"); // generous: a cold CLI JVM on a loaded machine
            assertThat(timedOut.exit()).as(timedOut.out() + timedOut.err()).isEqualTo(1);
            assertThat(timedOut.err())
                    .contains("timed out")
                    .contains(POLICY + ": enforced on 1 of 2 nodes")
                    .contains("lagging: node-2");
            Run status = run("status", "--policies");
            assertThat(status.exit()).isEqualTo(1);
            assertThat(status.out()).containsPattern(POLICY + " +- +1/2 +lagging .*node-2");
            assertThat(waiting.process().isAlive())
                    .as("wait does not return while node-2 has not applied")
                    .isTrue();

            signal(paused, "CONT");
            Run done = waiting.finish(Duration.ofSeconds(120));
            assertThat(done.exit()).as(done.err()).isZero();
            assertThat(done.out()).contains(POLICY + " enforced on 2/2 nodes");
        } finally {
            signal(paused, "CONT");
        }
        sandbox.awaitConverged();
    }

    /**
     * Nothing changes: the running agent's heartbeats keep its last contact moving while a paused
     * agent's stands still, which is how `status` tells a quiet node from a silent one.
     */
    @Test
    void anIdleNodesLastContactMovesWhileAPausedOnesStandsStill() throws Exception {
        sandbox.awaitConverged();
        ManagedProcess paused = sandbox.agent("node-2");
        signal(paused, "STOP");
        try {
            NodeStatus idleBefore = node("node-1");
            NodeStatus pausedBefore = node("node-2");
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            NodeStatus idle = idleBefore;
            // Past two heartbeat intervals, so a beat of node-2 sent just before the pause is in too.
            while (Timestamps.compare(
                            idle.getLastContact(),
                            Timestamps.add(idleBefore.getLastContact(), Durations.fromSeconds(3)))
                    < 0) {
                assertThat(System.nanoTime() - end)
                        .as("node-1's last contact moves without any change: " + idle)
                        .isNegative();
                Thread.sleep(200);
                idle = node("node-1");
            }
            assertThat(idle.getAppliedSequence())
                    .as("heartbeats apply nothing")
                    .isEqualTo(idleBefore.getAppliedSequence());
            NodeStatus silent = node("node-2");
            assertThat(silent.getLastContact())
                    .as("a paused agent says nothing")
                    .isEqualTo(pausedBefore.getLastContact());

            JsonNode nodes = JSON.readTree(run("status", "-o", "json").out()).path("nodes");
            assertThat(nodes.size()).isEqualTo(2);
            for (JsonNode n : nodes) {
                assertThat(n.path("lastContact").asText()).as(n.toString()).isNotEmpty();
            }
            assertThat(run("status").out()).contains("LAST CONTACT").containsPattern("node-1 .* ago");
        } finally {
            signal(paused, "CONT");
        }
        sandbox.awaitConverged();
    }

    private NodeStatus node(String name) throws Exception {
        return sandbox.inspection().listNodes().getNodesList().stream()
                .filter(n -> n.getNode().equals(name))
                .findFirst()
                .orElseThrow();
    }

    /** Write → enforced on both nodes, as the receipts measure it, for a few writes (logged, not asserted). */
    @Test
    void writeToEnforcedLatencyIsReported() throws Exception {
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            write("l" + i);
            Run waited = run("wait", "--for=enforced", POLICY, "--timeout=60s");
            assertThat(waited.exit()).as(waited.err()).isZero();
            JsonNode receipt = JSON.readTree(run("status", POLICY, "-o", "json").out())
                    .path("receipts")
                    .path(0);
            assertThat(receipt.path("enforced").asBoolean()).isTrue();
            millis.add(com.google.protobuf.util.Durations.toNanos(com.google.protobuf.util.Durations.parse(
                            receipt.path("latency").asText()))
                    / 1e6);
        }
        millis.sort(Double::compare);
        System.err.println("write -> enforced on 2/2 nodes (ms, sorted): " + millis);
        assertThat(millis).hasSize(10);
    }
}
