// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A staged deny-all on real packets (issue 31): x/a's connections still succeed while node-1's agent
 * counts each one as a would-be deny of the staged x/deny-all and {@code observe --staged} shows
 * them; promoting the policy (the annotation removed) enforces it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class StagedPoliciesEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final String WOULD_DENY = "kubeverdict_staged_verdicts_total";
    static final String DENY_ALL_LABEL = "policy=\"default/x/deny-all\"";

    static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: "y"}
            """ + LifecycleEndToEndTest.pod("x", "a", "node-1", "10.244.1.10", "Running")
            + LifecycleEndToEndTest.pod("y", "a", "node-1", "10.244.1.20", "Running")
            + LifecycleEndToEndTest.pod("y", "b", "node-2", "10.244.2.10", "Running");

    static String denyAll(boolean staged) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata:
                  namespace: x
                  name: deny-all
                %s
                spec:
                  podSelector: {}
                  policyTypes: [Ingress]
                """.formatted(staged ? "  annotations: {kube-verdict.io/staged: \"true\"}" : "");
    }

    private Path manifests;
    private Sandbox sandbox;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-staged-");
        Files.writeString(manifests.resolve("cluster.yaml"), CLUSTER);
        Files.writeString(manifests.resolve("policies.yaml"), denyAll(true));
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sp-"),
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

    private double wouldDeny() throws Exception {
        double v = MetricsText.sum(sandbox.agentMetrics("node-1"), WOULD_DENY, DENY_ALL_LABEL);
        return Double.isNaN(v) ? 0 : v;
    }

    /** One round of probes: every pair as the engine expects it, and into x/a from both y pods. */
    private void probeStillConnected() throws Exception {
        ProbeResult r = sandbox.probeAll().get(0);
        assertThat(r.mismatches()).as("observed equals the engine's matrix").isEmpty();
        assertThat(r.observed().connected("y/a", "x/a")).as("same node").isTrue();
        assertThat(r.observed().connected("y/b", "x/a")).as("across nodes").isTrue();
    }

    @Test
    void aStagedDenyAllIsCountedAndObservedNotEnforcedUntilPromoted() throws Exception {
        double before = wouldDeny();
        probeStillConnected();
        double after = wouldDeny();
        assertThat(after - before)
                .as("each of the two connections into x/a is a would-be deny of x/deny-all")
                .isGreaterThanOrEqualTo(2);

        Path out = Files.createTempFile(manifests, "observe-", ".out");
        Path err = Files.createTempFile(manifests, "observe-", ".err");
        Process observe = new ProcessBuilder(
                        sandbox.cliCommand("observe", "--staged", "--count", "4", "--wait", "PT180S"))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        try {
            // The agents send verdicts once an observer asks: connect until the CLI has its four.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            while (observe.isAlive() && System.nanoTime() < deadline) {
                probeStillConnected();
                observe.waitFor(500, TimeUnit.MILLISECONDS);
            }
            assertThat(observe.waitFor(10, TimeUnit.SECONDS))
                    .as("observe ended")
                    .isTrue();
        } finally {
            observe.destroy();
        }
        String printed = Files.readString(out, StandardCharsets.UTF_8);
        assertThat(observe.exitValue())
                .as(printed + Files.readString(err, StandardCharsets.UTF_8))
                .isZero();
        List<String> rows = printed.lines()
                .filter(l -> l.contains("staged: would be denied by ingress x/deny-all (tier default)"))
                .toList();
        assertThat(rows).as(printed).hasSize(4);
        assertThat(rows)
                .allSatisfy(row -> assertThat(row).contains("x/a (10.244.1.10)").contains("allowed"));

        // Promoted: the same object without the annotation is enforced.
        Files.writeString(manifests.resolve("policies.yaml"), denyAll(false));
        assertThat(sandbox.reload()).isTrue();
        ProbeResult r = sandbox.probeAll().get(0);
        assertThat(r.mismatches()).as("observed equals the engine's matrix").isEmpty();
        assertThat(r.observed().connected("y/a", "x/a")).isFalse();
        assertThat(r.observed().connected("y/b", "x/a")).isFalse();
        assertThat(r.observed().connected("x/a", "y/b"))
                .as("egress is not isolated")
                .isTrue();
    }
}
