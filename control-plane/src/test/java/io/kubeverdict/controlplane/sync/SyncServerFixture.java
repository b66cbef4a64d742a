// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** A hub, a PolicySync service and a real gRPC server on a loopback port, plus a client channel. */
final class SyncServerFixture implements AutoCloseable {
    final SnapshotHub hub = new SnapshotHub();
    final ControlPlaneMetrics metrics = new ControlPlaneMetrics(new SimpleMeterRegistry());
    final ExecutorService executor = Executors.newFixedThreadPool(2);
    final PolicySyncService sync;
    final GrpcServer endpoint;
    final ManagedChannel channel;

    SyncServerFixture(PolicySyncService.Options options) throws Exception {
        sync = new PolicySyncService(hub, metrics, NodeAuthorizer.allowAll(), executor, options);
        endpoint = GrpcEndpoint.create(new InetSocketAddress("127.0.0.1", 0), null, List.<BindableService>of(sync))
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port())
                .usePlaintext()
                // A fixed, small window so that a client that does not read stops the server quickly.
                .flowControlWindow(64 * 1024)
                .build();
    }

    SyncServerFixture() throws Exception {
        this(PolicySyncService.Options.defaults());
    }

    TestAgent agent(String node) {
        return TestAgent.connect(channel, node, true);
    }

    @Override
    public void close() throws Exception {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
        endpoint.close();
        sync.close();
        executor.shutdownNow();
    }
}
