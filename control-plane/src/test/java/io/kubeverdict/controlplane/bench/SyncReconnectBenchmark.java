// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.grpc.BindableService;
import io.grpc.ForwardingServerCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.CalculationLoop;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reconnect benchmark (not a test; `benchmarks` profile with
 * -Dbench.main=io.kubeverdict.controlplane.bench.SyncReconnectBenchmark): the fan-out cluster of
 * {@link SyncFanoutBenchmark}, A simulated agents in sync over real loopback sockets (one
 * connection each); then the server goes away for bench.outage.ms and comes back on the same port,
 * and every agent reconnects the way the real agent's SyncClient does (full-jitter backoff capped
 * at 1 s, then the channel's own connect backoff cut short so that the attempt dials). Measured from
 * the server's return: when each agent has its full snapshot and InSync (p50/p99/max), and the
 * latency of health checks meanwhile. The hub keeps its calculation across the restart, so the
 * figures are the sync service's; a real restart first recalculates (printed as "initial
 * calculation"), with health NOT_SERVING and streams waiting until it is done.
 * System properties: bench.pods, bench.agents, bench.outage.ms, bench.permits (full snapshots at once).
 */
public final class SyncReconnectBenchmark {
    static final long BACKOFF_INITIAL_MS = 100;
    static final long BACKOFF_CAP_MS = 1000;

    public static void main(String[] args) throws Exception {
        int pods = Integer.getInteger("bench.pods", 150_000);
        int agents = Integer.getInteger("bench.agents", 1000);
        long outageMs = Long.getLong("bench.outage.ms", 5000);
        int permits = Integer.getInteger("bench.permits", PolicySyncService.Options.DEFAULT_MAX_CONCURRENT_SNAPSHOTS);
        int nodes = (pods + SyncFanoutBenchmark.PODS_PER_NODE - 1) / SyncFanoutBenchmark.PODS_PER_NODE;
        if (agents > nodes) {
            throw new IllegalArgumentException("more agents than nodes: " + agents + " > " + nodes);
        }
        System.out.printf(
                "cluster: %d pods, %d nodes; %d agents; outage %d ms; %d full snapshots at once%n",
                pods, nodes, agents, outageMs, permits);

        SnapshotHub hub = new SnapshotHub();
        ControlPlaneMetrics metrics = new ControlPlaneMetrics(new SimpleMeterRegistry());
        CalculationLoop loop = new CalculationLoop(new IncrementalPolicyCalculator(), hub, metrics, 1, p -> {});
        loop.start();
        long t0 = System.nanoTime();
        for (int ns = 0; ns * SyncFanoutBenchmark.PODS_PER_NAMESPACE < pods; ns++) {
            Namespace n = SyncFanoutBenchmark.namespace(ns);
            NetworkPolicy allowClients = SyncFanoutBenchmark.allowClients(ns);
            NetworkPolicy sameTier = SyncFanoutBenchmark.sameTier(ns);
            loop.change("namespace/upsert", c -> c.upsertNamespace(n));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(allowClients));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(sameTier));
        }
        for (int i = 0; i < pods; i++) {
            Pod p = SyncFanoutBenchmark.pod(i, i % 20 == 0);
            loop.change("pod/upsert", c -> c.upsertPod(p));
        }
        loop.sourceSynced("bench");
        loop.firstCalculation().get(30, TimeUnit.MINUTES);
        System.out.printf(
                "initial calculation: %.1f s; snapshot of node-0: %d bytes%n",
                (System.nanoTime() - t0) / 1e9, hub.current("node-0").snapshot().getSerializedSize());

        ExecutorService senders =
                Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
        PolicySyncService.Options options = PolicySyncService.Options.defaults().withMaxConcurrentSnapshots(permits);
        Server server = Server.start(hub, metrics, senders, options, 0);
        int port = server.port();

        ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
        List<Agent> fleet = new ArrayList<>();
        long c0 = System.nanoTime();
        for (int i = 0; i < agents; i++) {
            fleet.add(new Agent(port, "node-" + i, timers));
        }
        awaitAllInSync(fleet, c0);
        System.out.printf("%d agents connected and in sync: %.1f s%n", agents, (System.nanoTime() - c0) / 1e9);

        server.close();
        long down = System.nanoTime();
        Thread.sleep(outageMs);
        server = Server.start(hub, metrics, senders, options, port);
        long back = System.nanoTime();
        System.out.printf("server away %.1f s, back on port %d%n", (back - down) / 1e9, port);

        HealthProbe probe = new HealthProbe(port);
        probe.start();
        int maxWaiting = 0;
        int maxSending = 0;
        while (!allInSyncSince(fleet, back)) {
            maxWaiting = Math.max(maxWaiting, (int) metrics.registry()
                    .get("kubeverdict_sync_snapshots_waiting")
                    .gauge()
                    .value());
            maxSending = Math.max(maxSending, (int) metrics.registry()
                    .get("kubeverdict_sync_snapshots_sending")
                    .gauge()
                    .value());
            if (System.nanoTime() - back > TimeUnit.MINUTES.toNanos(10)) {
                throw new IllegalStateException("agents did not get back in sync");
            }
            Thread.sleep(5);
        }
        probe.stop();
        long[] arrived = fleet.stream()
                .mapToLong(a -> Server.CALL_ARRIVED.get(a.node) - back)
                .sorted()
                .toArray();
        System.out.printf(
                "server back -> agent's Sync call reaches it (return noticed): p50 %.0f ms, p99 %.0f ms, max %.0f ms%n",
                SyncFanoutBenchmark.pct(arrived, 50) / 1e6,
                SyncFanoutBenchmark.pct(arrived, 99) / 1e6,
                arrived[arrived.length - 1] / 1e6);
        long[] each = fleet.stream().mapToLong(a -> a.inSyncAt - back).sorted().toArray();
        System.out.printf(
                "server back -> agent has its full snapshot and InSync (%d agents): p50 %.0f ms, p99 %.0f ms, max %.0f ms%n",
                agents,
                SyncFanoutBenchmark.pct(each, 50) / 1e6,
                SyncFanoutBenchmark.pct(each, 99) / 1e6,
                each[each.length - 1] / 1e6);
        long[] firstContact =
                fleet.stream().mapToLong(a -> a.streamOpenedAt - back).sorted().toArray();
        System.out.printf(
                "server back -> agent's stream answered (first message): p50 %.0f ms, p99 %.0f ms, max %.0f ms%n",
                SyncFanoutBenchmark.pct(firstContact, 50) / 1e6,
                SyncFanoutBenchmark.pct(firstContact, 99) / 1e6,
                firstContact[firstContact.length - 1] / 1e6);
        System.out.printf(
                "reconnect attempts during the outage and return: %d (%.1f per agent)%n",
                fleet.stream().mapToInt(a -> a.attempts.get()).sum(),
                fleet.stream().mapToInt(a -> a.attempts.get()).average().orElse(0));
        System.out.printf(
                "admission: at most %d streams sending a full snapshot, %d waiting in line%n", maxSending, maxWaiting);
        probe.report();

        fleet.forEach(Agent::close);
        timers.shutdownNow();
        server.close();
        senders.shutdownNow();
        loop.close();
        System.exit(0);
    }

    private static void awaitAllInSync(List<Agent> fleet, long since) throws InterruptedException {
        while (!allInSyncSince(fleet, since)) {
            if (System.nanoTime() - since > TimeUnit.MINUTES.toNanos(30)) {
                throw new IllegalStateException("agents did not get in sync");
            }
            Thread.sleep(20);
        }
    }

    private static boolean allInSyncSince(List<Agent> fleet, long since) {
        for (Agent a : fleet) {
            if (a.inSyncAt < since) {
                return false;
            }
        }
        return true;
    }

    /** A sync service and gRPC endpoint (with health) on a port: what a control-plane process serves. */
    record Server(PolicySyncService sync, GrpcServer endpoint) {
        /** System.nanoTime() when each agent's newest Sync call reached the server, by node. */
        static final Map<String, Long> CALL_ARRIVED = new ConcurrentHashMap<>();

        static Server start(
                SnapshotHub hub,
                ControlPlaneMetrics metrics,
                ExecutorService senders,
                PolicySyncService.Options options,
                int port)
                throws Exception {
            PolicySyncService sync = new PolicySyncService(hub, metrics, NodeAuthorizer.allowAll(), senders, options);
            ServerInterceptor arrivals = new ServerInterceptor() {
                @Override
                public <Q, R> ServerCall.Listener<Q> interceptCall(
                        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(
                            next.startCall(call, headers)) {
                        @Override
                        public void onMessage(Q message) {
                            if (message instanceof SyncRequest r) {
                                CALL_ARRIVED.put(r.getNode(), System.nanoTime());
                            }
                            super.onMessage(message);
                        }
                    };
                }
            };
            BindableService recorded = () -> ServerInterceptors.intercept(sync, arrivals);
            GrpcServer endpoint = GrpcEndpoint.create(
                            new InetSocketAddress("127.0.0.1", port), null, List.<BindableService>of(recorded))
                    .start();
            endpoint.setServing(true);
            return new Server(sync, endpoint);
        }

        int port() {
            return endpoint.port();
        }

        void close() throws Exception {
            endpoint.close();
            sync.close();
        }
    }

    /** Health checks every 20 ms on a connection of its own: latencies and answers. */
    static final class HealthProbe {
        private final ManagedChannel channel;
        private final List<Long> latencies = new ArrayList<>();
        private final AtomicInteger notServing = new AtomicInteger();
        private volatile boolean running = true;
        private final Thread thread;

        HealthProbe(int port) {
            channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                    .usePlaintext()
                    .build();
            thread = new Thread(this::run, "health-probe");
        }

        void start() {
            thread.start();
        }

        private void run() {
            var stub = HealthGrpc.newBlockingStub(channel);
            while (running) {
                long s = System.nanoTime();
                try {
                    ServingStatus st = stub.withDeadlineAfter(30, TimeUnit.SECONDS)
                            .withWaitForReady()
                            .check(HealthCheckRequest.getDefaultInstance())
                            .getStatus();
                    if (st != ServingStatus.SERVING) {
                        notServing.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    notServing.incrementAndGet();
                }
                synchronized (latencies) {
                    latencies.add(System.nanoTime() - s);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
            channel.shutdownNow();
        }

        void report() {
            long[] l;
            synchronized (latencies) {
                l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            }
            if (l.length == 0) {
                System.out.println("health: no checks completed");
                return;
            }
            System.out.printf(
                    "health checks while the fleet returned: %d, not SERVING %d; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                    l.length,
                    notServing.get(),
                    SyncFanoutBenchmark.pct(l, 50) / 1e6,
                    SyncFanoutBenchmark.pct(l, 99) / 1e6,
                    l[l.length - 1] / 1e6);
        }
    }

    /**
     * A simulated agent that reconnects like the real one and otherwise only notes when its
     * stream's InSync arrives.
     */
    static final class Agent {
        final String node;
        final ManagedChannel channel;
        final AtomicInteger attempts = new AtomicInteger();
        private final ScheduledExecutorService timers;
        private int failures; // consecutive streams that ended before InSync
        volatile long inSyncAt;
        volatile long streamOpenedAt;
        private volatile boolean streamAnswered;
        private volatile boolean closing;

        Agent(int port, String node, ScheduledExecutorService timers) {
            this.node = node;
            this.timers = timers;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                    .usePlaintext()
                    .maxInboundMessageSize(8 << 20)
                    .build();
            connect();
        }

        private void connect() {
            if (closing) {
                return;
            }
            attempts.incrementAndGet();
            streamAnswered = false;
            channel.resetConnectBackoff(); // dial now, not when the channel's own backoff says
            PolicySyncGrpc.newStub(channel)
                    .sync(
                            SyncRequest.newBuilder()
                                    .setNode(node)
                                    .setAgentVersion("bench")
                                    .build(),
                            new StreamObserver<ToAgent>() {
                                @Override
                                public void onNext(ToAgent m) {
                                    if (!streamAnswered) {
                                        streamAnswered = true;
                                        streamOpenedAt = System.nanoTime();
                                    }
                                    if (m.hasInSync()) {
                                        inSyncAt = System.nanoTime();
                                        failures = 0;
                                    }
                                }

                                @Override
                                public void onError(Throwable t) {
                                    reconnectLater();
                                }

                                @Override
                                public void onCompleted() {
                                    reconnectLater();
                                }
                            });
        }

        /** Full jitter: uniform in [0, min(cap, initial * 2^failures)]. */
        private void reconnectLater() {
            streamAnswered = false;
            if (closing) {
                return;
            }
            long bound = Math.min(BACKOFF_CAP_MS, BACKOFF_INITIAL_MS << Math.min(failures++, 20));
            timers.schedule(this::connect, ThreadLocalRandom.current().nextLong(bound + 1), TimeUnit.MILLISECONDS);
        }

        void close() {
            closing = true;
            channel.shutdownNow();
        }
    }
}
