// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The sandbox of the fault suite and the soak, started once for the whole test run (a JVM start
 * of three processes costs most of a minute on a loaded 2-core machine) and closed when the run
 * ends: the x,y,z × a,b,c fixture on node-1 (fail-closed) and node-2 ({@code --fail-open}),
 * namespaces prefixed {@value #PREFIX}, probed on TCP 80. Test classes get it as a parameter
 * ({@link Resolver}).
 */
final class FaultBed implements AutoCloseable {
    static final String PREFIX = "kvfault-";
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final Duration PROBE_TIMEOUT = Duration.ofMillis(1000);
    static final String NODE1 = "node-1";
    static final String NODE2 = "node-2";

    /**
     * Ingress-only policy sets; the fixture puts x/a x/c y/b z/a z/c on node-1 and x/b y/a y/c
     * z/b on node-2, so every change between them moves verdicts on both nodes.
     */
    static final String POLICIES_A = policy("x", "deny-ingress", """
            podSelector: {}
            policyTypes: [Ingress]
            """) + "---\n" + policy("y", "b-from-x", """
            podSelector: {matchLabels: {pod: b}}
            ingress:
            - from:
              - namespaceSelector: {matchLabels: {ns: x}}
            """);

    static final String POLICIES_B = policy("x", "from-y", """
            podSelector: {}
            ingress:
            - from:
              - namespaceSelector: {matchLabels: {ns: "y"}}
            """) + "---\n" + policy("z", "deny-a-b", """
            podSelector: {matchExpressions: [{key: pod, operator: In, values: [a, b]}]}
            policyTypes: [Ingress]
            """);
    static final String POLICIES_C = policy("y", "deny-ingress", """
            podSelector: {}
            policyTypes: [Ingress]
            """) + "---\n" + policy("x", "c-from-a", """
            podSelector: {matchLabels: {pod: c}}
            ingress:
            - from:
              - podSelector: {matchLabels: {pod: a}}
            """);

    /** An HTTP answer of the control plane's metrics port. */
    record HttpAnswer(int status, String body) {}

    final Progress progress;
    final Path manifests;
    final Sandbox sandbox;

    private FaultBed(Progress progress, Path manifests, Sandbox sandbox) {
        this.progress = progress;
        this.manifests = manifests;
        this.sandbox = sandbox;
    }

    static FaultBed start() throws Exception {
        TestLaunch.useTestClassPath();
        Path manifests = Files.createTempDirectory("kvt-faults-");
        try {
            Files.writeString(manifests.resolve("fixture.yaml"), UpstreamFixture.manifests());
            Files.writeString(manifests.resolve("policies.yaml"), POLICIES_A);
            SandboxOptions options = new SandboxOptions(
                            manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, PROBE_TIMEOUT, PREFIX)
                    .withAgentArgs(NODE2, "--fail-open");
            Progress progress = new Progress(new PrintWriter(System.err, true));
            FaultBed bed = new FaultBed(progress, manifests, Sandbox.start(options, progress));
            assertThat(bed.sandbox.placement().nodes()).containsExactly(NODE1, NODE2);
            return bed;
        } catch (Exception | Error e) {
            delete(manifests);
            throw e;
        }
    }

    /**
     * Writes the policies into the source directory and stages the sandbox's copy: returns what
     * they will do, before the control plane can see them ({@link Sandbox#publish()} then writes
     * them where it watches; enter the convergence window before that).
     */
    EnforcementModel stage(String policies) throws Exception {
        Files.writeString(manifests.resolve("policies.yaml"), policies);
        assertThat(sandbox.stage()).as("pods unchanged").isTrue();
        return EnforcementModel.of(sandbox);
    }

    /** Stages and publishes at once, without waiting: for when nothing watches (the control plane is down). */
    EnforcementModel write(String policies) throws Exception {
        EnforcementModel model = stage(policies);
        sandbox.publish();
        return model;
    }

    /** Writes the policies, waits until every agent enforces them and returns the engine's model. */
    EnforcementModel converge(String policies) throws Exception {
        EnforcementModel model = write(policies);
        sandbox.awaitConverged();
        return model;
    }

    /**
     * After a test, whatever it did or failed to undo: every process running, the copy rewritten
     * from the source directory (bad files a test wrote into it are replaced or removed), every
     * agent in sync on it.
     */
    void recover() throws Exception {
        if (!sandbox.controlPlane().alive()) {
            sandbox.startControlPlane();
        }
        for (String node : List.of(NODE1, NODE2)) {
            if (!sandbox.agent(node).alive()) {
                sandbox.startAgent(node);
            }
        }
        assertThat(sandbox.update()).isTrue();
        sandbox.awaitConverged();
    }

    ContinuousProber prober(ExpectationTimeline timeline, Verdicts initial) {
        return new ContinuousProber(sandbox.testbed(), TCP80, PROBE_TIMEOUT, timeline, initial.pods());
    }

    AgentStatus agentStatus(String node) {
        return sandbox.inspection().agent(node);
    }

    /** Waits until node's agent answers on its inspection port (a JVM just started takes a while). */
    AgentStatus awaitAgentAnswers(String node, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                return agentStatus(node);
            } catch (StatusRuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the agent of " + node + " does not answer within " + within + ": "
                            + e.getStatus() + "\n" + sandbox.agent(node).tail(20));
                }
                sandbox.inspection().resetConnectBackoff();
                Thread.sleep(100);
            }
        }
    }

    NodeStatus nodeStatus(String node) {
        return sandbox.inspection().nodes().stream()
                .filter(n -> n.getNode().equals(node))
                .findFirst()
                .orElseThrow();
    }

    /**
     * GET path on the control plane's metrics port (/metrics, /readyz), from a thread inside the
     * fabric namespace where it listens (HttpURLConnection connects on the calling thread).
     */
    HttpAnswer controlPlaneHttp(String path) throws Exception {
        String url = "http://" + sandbox.testbed().layout().fabricAddress() + ":"
                + SandboxProcesses.CONTROL_PLANE_METRICS_PORT + path;
        return sandbox.testbed().callIn(sandbox.testbed().layout().fabricNamespace(), () -> {
            HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(5000);
            try {
                int status = c.getResponseCode();
                InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
                String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                return new HttpAnswer(status, body);
            } finally {
                c.disconnect();
            }
        });
    }

    /**
     * The sum of a metric's samples in the control plane's /metrics (every label set), NaN when
     * the metric is not there or the port does not answer.
     */
    double controlPlaneMetric(String name) {
        try {
            HttpAnswer answer = controlPlaneHttp("/metrics");
            double sum = Double.NaN;
            for (String line : answer.body().split("\n")) {
                if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                    double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    sum = Double.isNaN(sum) ? v : sum + v;
                }
            }
            return sum;
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    /** A figure for the test log (the report quotes these lines). */
    void report(String format, Object... args) {
        progress.note("[faults] " + String.format(Locale.ROOT, format, args));
    }

    static double seconds(long sinceNanos) {
        return (System.nanoTime() - sinceNanos) / 1e9;
    }

    static String policy(String namespace, String name, String spec) {
        return NetpolEndToEndTest.policy(namespace, name, spec);
    }

    @Override
    public void close() throws Exception {
        try {
            sandbox.close();
        } finally {
            delete(manifests);
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** Hands test classes the one bed of the run, starting it on first use; JUnit closes it at the end. */
    static final class Resolver implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == FaultBed.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot()
                    .getStore(ExtensionContext.Namespace.create(FaultBed.class))
                    .getOrComputeIfAbsent(
                            FaultBed.class,
                            k -> {
                                try {
                                    return start();
                                } catch (Exception e) {
                                    throw new IllegalStateException("the fault bed did not start", e);
                                }
                            },
                            FaultBed.class);
        }
    }
}
