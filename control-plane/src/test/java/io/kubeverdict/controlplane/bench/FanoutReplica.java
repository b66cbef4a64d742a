// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.grpc.BindableService;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.CalculationLoop;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One control plane replica of {@link SyncFanoutBenchmark}: what each replica of the Deployment
 * holds, its own event thread and calculator fed the whole cluster, its own hub, sync service,
 * sender pool and gRPC port. Two of them in one JVM stand for two replicas sharing the machine's
 * cores (in a cluster they would run on two nodes: a pessimistic placement).
 */
final class FanoutReplica implements AutoCloseable {
    final SnapshotHub hub = new SnapshotHub();
    final ControlPlaneMetrics metrics = new ControlPlaneMetrics(new SimpleMeterRegistry());
    /** When this replica's event thread last published a node an agent of the benchmark follows. */
    final AtomicLong lastPublish = new AtomicLong();

    private final CalculationLoop loop;
    private final ExecutorService senders;
    private final PolicySyncService sync;
    private final GrpcServer endpoint;
    private final List<Pod> missed = new ArrayList<>();

    private FanoutReplica(List<Pod> pods) throws Exception {
        loop = new CalculationLoop(new IncrementalPolicyCalculator(), hub, metrics, 1, p -> {});
        loop.start();
        for (int ns = 0; ns * SyncFanoutBenchmark.PODS_PER_NAMESPACE < pods.size(); ns++) {
            Namespace n = SyncFanoutBenchmark.namespace(ns);
            NetworkPolicy allowClients = SyncFanoutBenchmark.allowClients(ns);
            NetworkPolicy sameTier = SyncFanoutBenchmark.sameTier(ns);
            loop.change("namespace/upsert", c -> c.upsertNamespace(n));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(allowClients));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(sameTier));
        }
        for (Pod p : pods) {
            loop.change("pod/upsert", c -> c.upsertPod(p));
        }
        loop.sourceSynced("bench");
        loop.firstCalculation().get(30, TimeUnit.MINUTES);
        senders = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
        sync = new PolicySyncService(
                hub, metrics, NodeAuthorizer.allowAll(), senders, PolicySyncService.Options.defaults());
        endpoint = GrpcEndpoint.create(new InetSocketAddress("127.0.0.1", 0), null, List.<BindableService>of(sync))
                .start();
    }

    /** A replica that has calculated {@code pods} (and the namespaces and policies they imply) and listens. */
    static FanoutReplica start(List<Pod> pods) throws Exception {
        return new FanoutReplica(pods);
    }

    int port() {
        return endpoint.port();
    }

    /** Notes in {@link #lastPublish} each publication of these nodes (the agents' ones). */
    void watch(int firstNode, int count) {
        for (int i = firstNode; i < firstNode + count; i++) {
            hub.subscribe("node-" + i, () -> lastPublish.set(System.nanoTime()));
        }
    }

    /** The pod's new state, as this replica's informer would deliver it. */
    void change(Pod after) {
        loop.change("pod/upsert", c -> c.upsertPod(after));
    }

    /** A change made while this replica sat out (it applies them at {@link #catchUp}, newest last). */
    void missed(Pod after) {
        missed.add(after);
    }

    /** Applies what it missed, so that it holds the same cluster as the others before its agents connect. */
    void catchUp() {
        missed.forEach(this::change);
        missed.clear();
    }

    Timer calculation() {
        return metrics.registry().get("kubeverdict_calculation").timer();
    }

    Timer snapshotBuild() {
        return metrics.registry().get("kubeverdict_snapshot_build").timer();
    }

    @Override
    public void close() throws Exception {
        endpoint.close();
        sync.close();
        senders.shutdownNow();
        loop.close();
    }
}
