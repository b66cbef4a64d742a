// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench.guard;

import io.kubeverdict.bench.BenchFiles;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.sandbox.MetricsText;
import io.kubeverdict.sandbox.Progress;
import io.kubeverdict.sandbox.Sandbox;
import io.kubeverdict.sandbox.SandboxOptions;
import io.kubeverdict.testbed.ConnectAttempt;
import io.kubeverdict.testbed.ServePort;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How long a new pod's first connection waits (issue 28): a pod appears — its namespace and
 * address in node-1's pod range exist — and connects at once, before the control plane knows it;
 * node-1's agent holds the SYN (pod address guard) until a state that knows the pod arrives, and
 * with a policy allowing it the connection completes then.
 *
 * <p>A {@link Sandbox} (real control plane and agents, prefix {@code kvfirst-}) runs namespace
 * "app": servers on node-1 and node-2, policies allowing role=client pods to them (ingress on the
 * servers, egress on the clients), and the new pod "app/new" (role=client, 10.244.1.100 on
 * node-1). Each round takes the pod out of the manifests and waits until every agent forgot it,
 * then writes it back (the pod's creation: {@code Sandbox.publish}, after the engine staged it)
 * and at once connects from it to one server — the same node and the other node alternately —
 * and records (i) the first SYN to the connection established and (ii) the pod's creation to the
 * connection established, and whether node-1's guard held the SYN (its
 * kubeverdict_guard_packets_total{outcome="allowed"} grew). The control plane reads a manifest
 * directory, which waits until it has been quiet for 200 ms before loading: part of (ii) here,
 * an API server's watch has no such wait.
 *
 * <p>Usage (root, normally through bin/bench-first-connection): FirstConnectionBench [--rounds N]
 */
public final class FirstConnectionBench {
    private static final String PREFIX = "kvfirst-";
    private static final String NEW_POD = "app/new";
    private static final String NEW_POD_IP = "10.244.1.100";
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(15);

    private record Sample(String target, double synMillis, double createdMillis, boolean held, String failure) {}

    public static void main(String[] args) throws Exception {
        int rounds = 30;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("usage: FirstConnectionBench [--rounds N]");
        }
        new FirstConnectionBench(rounds).run();
        System.exit(0);
    }

    private final int rounds;
    private final Progress progress = new Progress(new PrintWriter(System.err, true));

    private FirstConnectionBench(int rounds) {
        this.rounds = rounds;
    }

    private void run() throws Exception {
        Path manifests = Files.createTempDirectory(PREFIX);
        Thread cleanup = new Thread(() -> BenchFiles.deleteTree(manifests), "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        BenchFiles.write(manifests.resolve("policies.yaml"), POLICIES);
        BenchFiles.write(manifests.resolve("cluster.yaml"), cluster(true));
        SandboxOptions options = new SandboxOptions(
                manifests, 2, List.of(new ServePort(80, Protocol.TCP)), "10.244.0.0/16", Duration.ofSeconds(2), PREFIX);
        List<Sample> samples = new ArrayList<>();
        try (Sandbox sandbox = Sandbox.start(options, progress)) {
            if (!sandbox.placement().podRanges().of().containsKey("node-1")) {
                throw new IllegalStateException(
                        "node-1 has no pod range: " + sandbox.placement().podRanges());
            }
            String[] servers = {"app/server", "app/server-2"};
            // One warm-up round per server, not reported.
            for (int round = -2; round < 2 * rounds; round++) {
                String server = servers[Math.floorMod(round, 2)];
                Sample s = round(sandbox, manifests, server);
                if (round >= 0) {
                    samples.add(s);
                }
                progress.note(String.format(
                        Locale.ROOT,
                        "%s %-12s SYN->established %7.1f ms  created->established %7.1f ms  held %s%s",
                        round < 0 ? "warm-up" : "round " + (round / 2 + 1),
                        server.equals("app/server") ? "same node" : "other node",
                        s.synMillis(),
                        s.createdMillis(),
                        s.held() ? "yes" : "no",
                        s.failure() == null ? "" : "  FAILED: " + s.failure()));
            }
        }
        report(samples, "same node", "app/server");
        report(samples, "other node", "app/server-2");
        Runtime.getRuntime().removeShutdownHook(cleanup);
        BenchFiles.deleteTree(manifests);
    }

    /** Forgets the new pod, then creates it and connects from it at once. */
    private Sample round(Sandbox sandbox, Path manifests, String server) throws Exception {
        BenchFiles.write(manifests.resolve("cluster.yaml"), cluster(false));
        if (!sandbox.reload() || !sandbox.away().equals(List.of(NEW_POD))) {
            throw new IllegalStateException("the sandbox did not take the pod out: away " + sandbox.away());
        }
        double allowedBefore = allowed(sandbox);
        BenchFiles.write(manifests.resolve("cluster.yaml"), cluster(true));
        if (!sandbox.stage()) {
            throw new IllegalStateException("the sandbox refused the pod back");
        }
        InetSocketAddress to =
                new InetSocketAddress(sandbox.placement().ipsOf().get(server).get(0), 80);
        long created = System.nanoTime();
        sandbox.publish();
        ConnectAttempt attempt = ConnectAttempt.from(sandbox.testbed(), NEW_POD, to, CONNECT_TIMEOUT);
        sandbox.awaitConverged();
        boolean held = allowed(sandbox) > allowedBefore;
        return new Sample(server, attempt.millis(), (attempt.endNanos() - created) / 1e6, held, attempt.failure());
    }

    private static double allowed(Sandbox sandbox) throws Exception {
        double v = MetricsText.sum(
                sandbox.agentMetrics("node-1"), "kubeverdict_guard_packets_total", "outcome=\"allowed\"");
        return Double.isNaN(v) ? 0 : v;
    }

    private static void report(List<Sample> all, String label, String server) {
        List<Sample> samples =
                all.stream().filter(s -> s.target().equals(server)).toList();
        long failed = samples.stream().filter(s -> s.failure() != null).count();
        long held = samples.stream().filter(Sample::held).count();
        long retransmitted = samples.stream()
                .filter(s -> s.failure() == null && s.synMillis() >= 900)
                .count();
        System.out.printf(
                Locale.ROOT,
                "%s (%d rounds, %d held by node-1's guard, %d failed, %d took >= 900 ms: a SYN retransmitted)%n",
                label,
                samples.size(),
                held,
                failed,
                retransmitted);
        System.out.println("  "
                + stats(
                        "first SYN -> established",
                        samples.stream().map(Sample::synMillis).toList()));
        System.out.println("  "
                + stats(
                        "pod created -> established",
                        samples.stream().map(Sample::createdMillis).toList()));
    }

    /** p50, p99 (nearest rank) and max, in ms. */
    private static String stats(String what, List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        if (sorted.isEmpty()) {
            return what + ": no samples";
        }
        return String.format(
                Locale.ROOT,
                "%-27s p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms",
                what,
                rank(sorted, 0.50),
                rank(sorted, 0.99),
                sorted.get(sorted.size() - 1));
    }

    private static double rank(List<Double> sorted, double q) {
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static String cluster(boolean withNewPod) {
        return "apiVersion: v1\nkind: Namespace\nmetadata: {name: app, labels: {ns: app}}\n"
                + pod("server", "node-1", "server", null)
                + pod("server-2", "node-2", "server", null)
                + (withNewPod ? pod("new", "node-1", "client", NEW_POD_IP) : "");
    }

    private static String pod(String name, String node, String role, String ip) {
        return "---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: app, name: " + name + ", labels: {role: " + role
                + "}}\nspec: {nodeName: " + node
                + ", containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}\n"
                + (ip == null ? "" : "status: {phase: Running, podIPs: [{ip: " + ip + "}]}\n");
    }

    private static final String POLICIES = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: app, name: server-from-client}
            spec:
              podSelector: {matchLabels: {role: server}}
              ingress: [{from: [{podSelector: {matchLabels: {role: client}}}]}]
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: app, name: client-to-server}
            spec:
              podSelector: {matchLabels: {role: client}}
              policyTypes: [Egress]
              egress: [{to: [{podSelector: {matchLabels: {role: server}}}]}]
            """;
}
