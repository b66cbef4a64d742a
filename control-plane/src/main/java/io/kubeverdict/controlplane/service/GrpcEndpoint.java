package io.kubeverdict.controlplane.service;

import io.grpc.BindableService;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.services.HealthStatusManager;
import io.kubeverdict.controlplane.tls.PeerIdentityInterceptor;
import io.kubeverdict.controlplane.tls.TlsFiles;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's gRPC server: PolicySync, ControlPlaneInspection, grpc.health.v1 and server
 * reflection (v1 and v1alpha, so that every reflection client works), optionally behind mTLS.
 */
public final class GrpcEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(GrpcEndpoint.class);

    private final HealthStatusManager health = new HealthStatusManager();
    private final Server server;

    public GrpcEndpoint(InetSocketAddress listen, TlsFiles tls, List<BindableService> services) throws IOException {
        ServerCredentials creds = tls == null ? InsecureServerCredentials.create() : tls.serverCredentials();
        NettyServerBuilder b = NettyServerBuilder.forAddress(listen, creds)
                // Agents keep their Sync streams open for days: notice dead peers.
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true);
        PeerIdentityInterceptor identity = new PeerIdentityInterceptor();
        for (BindableService s : services) {
            b.addService(ServerInterceptors.intercept(s, identity));
        }
        b.addService(health.getHealthService());
        b.addService(ProtoReflectionServiceV1.newInstance());
        @SuppressWarnings("deprecation")
        BindableService v1alpha = ProtoReflectionService.newInstance();
        b.addService(v1alpha);
        this.server = b.build();
        for (String name : List.of(HealthStatusManager.SERVICE_NAME_ALL_SERVICES,
                PolicySyncGrpc.SERVICE_NAME, ControlPlaneInspectionGrpc.SERVICE_NAME)) {
            health.setStatus(name, ServingStatus.NOT_SERVING);
        }
        if (tls == null) {
            log.warn("*****************************************************************************");
            log.warn("* gRPC WITHOUT TLS on {}: any client can read any node's policy snapshot.", listen);
            log.warn("* Use --tls-cert/--tls-key/--tls-client-ca in production.");
            log.warn("*****************************************************************************");
        }
    }

    public GrpcEndpoint start() throws IOException {
        server.start();
        log.info("gRPC listening on {}", server.getListenSockets());
        return this;
    }

    public int port() {
        return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    }

    /** SERVING while the control plane is ready (see service.Readiness), NOT_SERVING otherwise. */
    public void serving(boolean serving) {
        for (String name : List.of(HealthStatusManager.SERVICE_NAME_ALL_SERVICES,
                PolicySyncGrpc.SERVICE_NAME, ControlPlaneInspectionGrpc.SERVICE_NAME)) {
            health.setStatus(name, serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
        }
    }

    /** Stops taking calls, lets running ones end for a moment, then cancels the rest (Sync streams). */
    @Override
    public void close() throws InterruptedException {
        health.enterTerminalState();
        server.shutdown();
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
            server.shutdownNow();
            server.awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
