// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ConnectAttempt;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A pod's first connection, sent before the control plane knows the pod (issue 28, "enforced from
 * the first packet"): the pod's namespace and address exist, the manifests do not have it yet.
 * The sandbox gives node-1 its pod range, so node-1's agent holds the first SYN until a state
 * knows the address: with a policy allowing it the connection completes once the pod's state
 * arrives; with a deny it never completes. The SYN is sent first and the pod published only once
 * node-1's agent reports it held, so the test does not depend on which comes first.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class FirstConnectionEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final String NEW_POD = "app/new";
    static final String NEW_POD_IP = "10.244.1.100";
    private static final Duration GENEROUS = Duration.ofSeconds(30);

    static final String NAMESPACE = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: app, labels: {ns: app}}
            """;

    static String pod(String name, String node, String role, String ip) {
        return """
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: app, name: %s, labels: {role: %s}}
                spec: {nodeName: %s, containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}
                """.formatted(name, role, node)
                + (ip == null ? "" : "status: {phase: Running, podIPs: [{ip: %s}]}\n".formatted(ip));
    }

    /** The servers (addresses from their nodes' ranges) and, when present, the new client pod. */
    static String cluster(boolean withNewPod) {
        return NAMESPACE
                + pod("server", "node-1", "server", null)
                + pod("server-2", "node-2", "server", null)
                + (withNewPod ? pod("new", "node-1", "client", NEW_POD_IP) : "");
    }

    static final String ALLOW = NetpolEndToEndTest.policy("app", "server-from-client", """
            podSelector: {matchLabels: {role: server}}
            ingress:
            - from: [{podSelector: {matchLabels: {role: client}}}]
            """) + "---\n"
            + NetpolEndToEndTest.policy("app", "client-to-server", """
            podSelector: {matchLabels: {role: client}}
            policyTypes: [Egress]
            egress:
            - to: [{podSelector: {matchLabels: {role: server}}}]
            """);

    /** The servers are selected by nothing: without the guard the SYN would pass unpoliced. */
    static final String DENY = NetpolEndToEndTest.policy("app", "client-deny-egress", """
            podSelector: {matchLabels: {role: client}}
            policyTypes: [Egress]
            """);

    private Path manifests;
    private Sandbox sandbox;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-first-");
        Files.writeString(manifests.resolve("cluster.yaml"), cluster(true));
        Files.writeString(manifests.resolve("policies.yaml"), ALLOW);
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sb-"),
                new Progress(new java.io.PrintWriter(System.err, true)));
        assertThat(sandbox.placement().podRanges().generated())
                .containsEntry("node-1", List.of("10.244.1.0/24"))
                .containsEntry("node-2", List.of("10.244.2.0/24"));
        assertThat(sandbox.placement().ipsOf()).containsEntry(NEW_POD, List.of(NEW_POD_IP));
        // The agent programmed the range into its guard set.
        assertThat(sandbox.testbed()
                        .exec(
                                sandbox.testbed().layout().nodeNamespace("node-1"),
                                "nft",
                                "list",
                                "set",
                                "inet",
                                "kube_verdict",
                                "guard4"))
                .contains("10.244.1.0/24");
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

    @Test
    void anAllowedFirstConnectionCompletesOnceThePodsStateArrives() throws Exception {
        ConnectAttempt first = firstConnection(ALLOW, "server-2", Duration.ofSeconds(20));
        assertThat(first.failure()).as("held, then allowed").isNull();
    }

    @Test
    void aDeniedFirstConnectionNeverCompletes() throws Exception {
        // Long enough for the hold bound (2 s) and the SYN's retransmissions at 1, 3 and 7 s.
        ConnectAttempt first = firstConnection(DENY, "server", Duration.ofSeconds(12));
        assertThat(first.failure())
                .as("held, then denied; its retransmissions denied too")
                .isEqualTo("timeout");
        assertThat(guard("kubeverdict_guard_packets_total", "outcome=\"denied\""))
                .as("the held SYN was judged by the state that knew the pod")
                .isPositive();
    }

    /**
     * Takes the new pod out of the manifests (the agents forget its address), then connects from it
     * to server (node-1 same node, server-2 the other) and publishes it once node-1 holds the SYN.
     */
    private ConnectAttempt firstConnection(String policies, String server, Duration timeout) throws Exception {
        Files.writeString(manifests.resolve("policies.yaml"), policies);
        Files.writeString(manifests.resolve("cluster.yaml"), cluster(false));
        assertThat(sandbox.reload()).isTrue();
        assertThat(sandbox.away()).containsExactly(NEW_POD);
        double allowedBefore = guard("kubeverdict_guard_packets_total", "outcome=\"allowed\"");
        double deniedBefore = guard("kubeverdict_guard_packets_total", "outcome=\"denied\"");

        InetSocketAddress to = new InetSocketAddress(
                sandbox.placement().ipsOf().get("app/" + server).get(0), 80);
        CompletableFuture<ConnectAttempt> attempt = CompletableFuture.supplyAsync(() -> {
            try {
                return ConnectAttempt.from(sandbox.testbed(), NEW_POD, to, timeout);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        long deadline = System.nanoTime() + GENEROUS.toNanos();
        while (!(guard("kubeverdict_guard_held", null) >= 1)) {
            assertThat(attempt).as("the SYN is held, not answered").isNotDone();
            assertThat(System.nanoTime()).as("node-1 holds the SYN").isLessThan(deadline);
            Thread.sleep(20);
        }
        Files.writeString(manifests.resolve("cluster.yaml"), cluster(true));
        assertThat(sandbox.update()).isTrue();
        assertThat(sandbox.away()).isEmpty();
        ConnectAttempt result = attempt.get(timeout.plus(GENEROUS).toSeconds(), TimeUnit.SECONDS);
        sandbox.awaitConverged();
        double judged = guard("kubeverdict_guard_packets_total", "outcome=\"allowed\"")
                - allowedBefore
                + guard("kubeverdict_guard_packets_total", "outcome=\"denied\"")
                - deniedBefore;
        assertThat(judged)
                .as("node-1 judged the held SYN once a state knew the pod")
                .isGreaterThanOrEqualTo(1);
        return result;
    }

    private double guard(String name, String label) throws Exception {
        double v = MetricsText.sum(sandbox.agentMetrics("node-1"), name, label);
        return Double.isNaN(v) ? 0 : v;
    }
}
