package io.kubeverdict.agent.inspect;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.grpc.services.HealthStatusManager;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The agent's gRPC server: AgentInspection, server reflection (v1 and v1alpha, so both current
 * grpcurl and older reflection clients work) and grpc.health.v1, which reports SERVING once an
 * in-sync state is in the kernel and stays so while the control plane is away (the agent keeps
 * enforcing then).
 */
public final class InspectionServer implements AutoCloseable {
    private final Server server;
    private final HealthStatusManager health = new HealthStatusManager();

    public InspectionServer(InetSocketAddress listen, BindableService inspection) {
        this.server = NettyServerBuilder.forAddress(listen)
                .addService(inspection)
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(v1alphaReflection())
                .addService(health.getHealthService())
                .build();
        setServing(false);
    }

    @SuppressWarnings("deprecation")
    private static BindableService v1alphaReflection() {
        return io.grpc.protobuf.services.ProtoReflectionService.newInstance();
    }

    public InspectionServer start() throws IOException {
        server.start();
        return this;
    }

    public int port() {
        return server.getPort();
    }

    public void setServing(boolean serving) {
        ServingStatus status = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
        health.setStatus(AgentInspectionGrpc.SERVICE_NAME, status);
    }

    @Override
    public void close() throws InterruptedException {
        health.enterTerminalState();
        server.shutdown();
        if (!server.awaitTermination(3, TimeUnit.SECONDS)) {
            server.shutdownNow();
        }
    }
}
