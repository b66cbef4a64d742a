// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench.restart;

import io.kubeverdict.bench.BenchFiles;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.sandbox.Progress;
import io.kubeverdict.sandbox.Sandbox;
import io.kubeverdict.sandbox.SandboxOptions;
import io.kubeverdict.testbed.ServePort;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A changed cluster enforced after the control plane's restart (issue 34): a {@link Sandbox}
 * (real control plane and two agents, prefix {@code kvrestart-}) runs namespace "app" with a
 * server on node-1 and a client on node-2, no policy. Each round, with the client connecting to
 * the server: the control plane is killed (SIGKILL by PID), a policy denying the server's ingress
 * is written into the directory it reads, and after {@code --down} seconds it is started again.
 * The client then connects every {@value #PROBE_EVERY_MS} ms until a connection fails (node-1's
 * agent drops its SYN): the restart (the process spawned) to that first refused connection is the
 * round's figure. The points between come from the processes' logs (their first lines after the
 * spawn): the control plane's first log line (the JVM started), its gRPC port open, its first
 * full publication, node-1's agent connected (the control plane's log), the agent in sync (its
 * log), and node-2's agent (whose node did not change) in sync by resuming (its log). After the
 * round the policy is removed and every agent converges before the next.
 *
 * <p>Usage (root, normally through bin/bench-restart): RestartBench [--rounds N] [--down SECONDS]
 */
public final class RestartBench {
    private static final String PREFIX = "kvrestart-";
    private static final String NODE = "node-1";
    private static final long PROBE_EVERY_MS = 10;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(250);
    private static final Duration ENFORCE_DEADLINE = Duration.ofSeconds(60);

    public static void main(String[] args) throws Exception {
        int rounds = 5;
        int down = 40;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--down" -> down = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("usage: RestartBench [--rounds N] [--down SECONDS]");
        }
        new RestartBench(rounds, Duration.ofSeconds(down)).run();
        System.exit(0);
    }

    private final int rounds;
    private final Duration down;
    private final Progress progress = new Progress(new PrintWriter(System.err, true));

    private RestartBench(int rounds, Duration down) {
        this.rounds = rounds;
        this.down = down;
    }

    private void run() throws Exception {
        Path manifests = Files.createTempDirectory(PREFIX);
        Thread cleanup = new Thread(() -> BenchFiles.deleteTree(manifests), "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        BenchFiles.write(manifests.resolve("cluster.yaml"), CLUSTER);
        SandboxOptions options = new SandboxOptions(
                manifests, 2, List.of(new ServePort(80, Protocol.TCP)), "10.244.0.0/16", Duration.ofSeconds(2), PREFIX);
        List<RestartTimeline> timelines = new ArrayList<>();
        try (Sandbox sandbox = Sandbox.start(options, progress)) {
            InetSocketAddress server = new InetSocketAddress(
                    sandbox.placement().ipsOf().get("app/server").get(0), 80);
            for (int round = 1; round <= rounds; round++) {
                RestartTimeline t = round(sandbox, manifests, server);
                timelines.add(t);
                progress.note(String.format(Locale.ROOT, "round %d: %s", round, t.describe()));
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%d rounds, control plane down %d s each; ms after the restart (process spawned), median / p90 / max:%n",
                timelines.size(),
                down.toSeconds());
        for (String point : RestartTimeline.POINTS) {
            System.out.println("  " + RestartTimeline.stats(point, timelines));
        }
        Runtime.getRuntime().removeShutdownHook(cleanup);
        BenchFiles.deleteTree(manifests);
    }

    /** One restart with a changed cluster; returns its timeline. */
    private RestartTimeline round(Sandbox sandbox, Path manifests, InetSocketAddress server) throws Exception {
        ProbeResult before = probeUntilRefused(sandbox, server, Duration.ofSeconds(1));
        if (before.refusedAtMillis() >= 0) {
            throw new IllegalStateException("the client cannot reach the server before the round: " + before.failure());
        }
        sandbox.killControlPlane();
        BenchFiles.write(manifests.resolve("deny.yaml"), DENY);
        if (!sandbox.update()) {
            throw new IllegalStateException("the sandbox refused the policy");
        }
        Thread.sleep(down.toMillis());
        long spawned = System.currentTimeMillis();
        sandbox.startControlPlane();
        ProbeResult enforced = probeUntilRefused(sandbox, server, ENFORCE_DEADLINE);
        if (enforced.refusedAtMillis() < 0) {
            throw new IllegalStateException("the policy was not enforced within " + ENFORCE_DEADLINE);
        }
        sandbox.awaitConverged();
        RestartTimeline timeline = RestartTimeline.read(
                spawned,
                enforced.refusedAtMillis(),
                sandbox.controlPlane().log(),
                sandbox.agent(NODE).log(),
                NODE,
                sandbox.agent("node-2").log());
        Files.delete(manifests.resolve("deny.yaml"));
        if (!sandbox.reload()) {
            throw new IllegalStateException("the sandbox refused the policy's removal");
        }
        return timeline;
    }

    /** The wall time of the first connection from the client that failed, or -1 if all connected until the deadline. */
    private record ProbeResult(long refusedAtMillis, String failure) {}

    private static ProbeResult probeUntilRefused(Sandbox sandbox, InetSocketAddress server, Duration deadline)
            throws Exception {
        String client = sandbox.testbed().layout().podNamespace("app/client");
        return sandbox.testbed().callIn(client, () -> {
            long end = System.nanoTime() + deadline.toNanos();
            while (System.nanoTime() < end) {
                long at = System.currentTimeMillis();
                try (SocketChannel channel = SocketChannel.open()) {
                    channel.socket().connect(server, (int) PROBE_TIMEOUT.toMillis());
                } catch (IOException e) {
                    return new ProbeResult(at, e.toString());
                }
                Thread.sleep(PROBE_EVERY_MS);
            }
            return new ProbeResult(-1, null);
        });
    }

    private static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: app}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: app, name: server, labels: {role: server}}
            spec: {nodeName: node-1, containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: app, name: client, labels: {role: client}}
            spec: {nodeName: node-2, containers: [{name: c, image: i}]}
            """;

    private static final String DENY = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: app, name: server-deny-ingress}
            spec:
              podSelector: {matchLabels: {role: server}}
              policyTypes: [Ingress]
            """;
}
