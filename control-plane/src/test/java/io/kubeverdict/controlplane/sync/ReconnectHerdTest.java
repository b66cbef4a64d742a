// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A bounded slice of the reconnect benchmark (bench/SyncReconnectBenchmark): 100 agents, each on
 * its own connection, are in sync; the server restarts on the same port and all of them come
 * back at once. Every agent gets its full, current state, the admission limit holds, and health
 * answers SERVING throughout. No timing is asserted.
 */
class ReconnectHerdTest {
    private static final int AGENTS = 100;
    private static final int PERMITS = 4;

    private final SnapshotHub hub = new SnapshotHub();
    private final ControlPlaneMetrics metrics = new ControlPlaneMetrics(new SimpleMeterRegistry());
    private final ExecutorService executor = Executors.newFixedThreadPool(2);
    private final List<ManagedChannel> channels = new ArrayList<>();
    private PolicySyncService sync;
    private GrpcServer endpoint;

    @AfterEach
    void tearDown() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (sync != null) {
            sync.close();
        }
        executor.shutdownNow();
    }

    private void startServer(int port) throws Exception {
        sync = new PolicySyncService(
                hub,
                metrics,
                NodeAuthorizer.allowAll(),
                executor,
                PolicySyncService.Options.defaults().withMaxConcurrentSnapshots(PERMITS));
        endpoint = GrpcEndpoint.create(new InetSocketAddress("127.0.0.1", port), null, List.<BindableService>of(sync))
                .start();
        endpoint.setServing(true);
    }

    private void stopServer() throws Exception {
        endpoint.close();
        sync.close();
    }

    /** Returning agents whose stream has not handed over its InSync yet (server side). */
    private long sessionsNotInSync() {
        long n = 0;
        for (int i = 0; i < AGENTS; i++) {
            if (sync.sessionsOf("node-" + i).stream().noneMatch(SyncSession::inSync)) {
                n++;
            }
        }
        return n;
    }

    private static NodeSnapshot node(int n, String sharedMember) {
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            eps.add(podEndpoint("ns-" + n, "pod-" + i, "10.1." + n + "." + (i + 1), "ns-" + n + "/allow"));
        }
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            members.add("10.2." + (i / 250) + "." + (i % 250));
        }
        members.add(sharedMember);
        return snapshot(
                "node-" + n,
                List.of(ipSet("s:shared", members.toArray(String[]::new))),
                List.of(allowIngressFrom("ns-" + n + "/allow", "s:shared")),
                eps);
    }

    @Test
    void aReturningFleetGetsInSyncWhileHealthStaysServing() throws Exception {
        for (int n = 0; n < AGENTS; n++) {
            hub.publish(node(n, "10.3.0.1"), 0);
        }
        hub.markReady();
        startServer(0);
        int port = endpoint.port();
        List<TestAgent> agents = new ArrayList<>();
        for (int n = 0; n < AGENTS; n++) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port)
                    .usePlaintext()
                    .build();
            channels.add(ch);
            agents.add(TestAgent.connect(ch, "node-" + n, true));
        }
        for (TestAgent a : agents) {
            a.readUntilInSync();
        }

        // The control plane goes away; the cluster changes meanwhile; it comes back on the same port.
        stopServer();
        for (TestAgent a : agents) {
            assertThat(a.readUntilEnd().isOk()).isFalse();
        }
        for (int n = 0; n < AGENTS; n++) {
            hub.publish(node(n, "10.3.0.2"), 0);
        }
        startServer(port);
        ManagedChannel probe =
                NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        channels.add(probe);
        var health = HealthGrpc.newBlockingStub(probe);

        List<TestAgent> returned = new ArrayList<>();
        for (int n = 0; n < AGENTS; n++) {
            returned.add(TestAgent.connectWhenReady(channels.get(n), "node-" + n));
        }
        int maxSending = 0;
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120); // bounds the loop; readUntilInSync reports
        do {
            ServingStatus status = health.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance())
                    .getStatus();
            assertThat(status)
                    .as("health while %d agents are in line", sessionsNotInSync())
                    .isEqualTo(ServingStatus.SERVING);
            maxSending = Math.max(maxSending, (int) metrics.registry()
                    .get("kubeverdict_sync_snapshots_sending")
                    .gauge()
                    .value());
            Thread.sleep(2);
        } while (sessionsNotInSync() > 0 && System.nanoTime() < giveUp);
        for (int n = 0; n < AGENTS; n++) {
            TestAgent a = returned.get(n);
            a.readUntilInSync();
            assertThat(a.state("node-" + n)).isEqualTo(AgentView.canonical(node(n, "10.3.0.2")));
        }
        assertThat(maxSending).isLessThanOrEqualTo(PERMITS);
        assertThat(health.check(HealthCheckRequest.getDefaultInstance()).getStatus())
                .isEqualTo(ServingStatus.SERVING);
        assertThat(metrics.registry()
                        .get("kubeverdict_sync_snapshots_waiting")
                        .gauge()
                        .value())
                .isZero();
        returned.forEach(TestAgent::close);
    }
}
