// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The bootstrap over a real socket: the given service, health for it and "", both reflection versions. */
class GrpcServerTest {
    private GrpcServer server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        // Any real service: every method answers UNIMPLEMENTED, which is enough to see it is served.
        server = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .service(new AgentInspectionGrpc.AgentInspectionImplBase() {})
                .build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    private ServingStatus health(String service) {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void healthIsNotServingUntilToldForTheServerAndEachService() {
        String inspection = AgentInspectionGrpc.SERVICE_NAME;
        assertThat(health("")).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(health(inspection)).isEqualTo(ServingStatus.NOT_SERVING);
        server.setServing(true);
        assertThat(health("")).isEqualTo(ServingStatus.SERVING);
        assertThat(health(inspection)).isEqualTo(ServingStatus.SERVING);
        server.setServing(false);
        assertThat(health(inspection)).isEqualTo(ServingStatus.NOT_SERVING);
        assertThatThrownBy(() -> health("no.such.Service"))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void theGivenServiceIsServed() {
        assertThatThrownBy(() -> AgentInspectionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .getStatus(AgentStatusRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }

    @Test
    void reflectionV1AndV1alphaBothListEveryService() throws Exception {
        List<String> expected = List.of(AgentInspectionGrpc.SERVICE_NAME, "grpc.health.v1.Health",
                "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection");
        assertThat(listServicesV1()).containsAll(expected);
        assertThat(listServicesV1alpha()).containsAll(expected);
    }

    private List<String> listServicesV1() throws Exception {
        CompletableFuture<List<String>> names = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> call =
                io.grpc.reflection.v1.ServerReflectionGrpc.newStub(channel).serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(io.grpc.reflection.v1.ServerReflectionResponse r) {
                        List<String> list = new ArrayList<>();
                        r.getListServicesResponse().getServiceList().forEach(s -> list.add(s.getName()));
                        names.complete(list);
                    }

                    @Override
                    public void onError(Throwable t) {
                        names.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {}
                });
        call.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build());
        try {
            return names.get(10, TimeUnit.SECONDS);
        } finally {
            call.onCompleted();
        }
    }

    private List<String> listServicesV1alpha() throws Exception {
        CompletableFuture<List<String>> names = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> call =
                io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel).serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse r) {
                        List<String> list = new ArrayList<>();
                        r.getListServicesResponse().getServiceList().forEach(s -> list.add(s.getName()));
                        names.complete(list);
                    }

                    @Override
                    public void onError(Throwable t) {
                        names.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {}
                });
        call.onNext(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("").build());
        try {
            return names.get(10, TimeUnit.SECONDS);
        } finally {
            call.onCompleted();
        }
    }

    @Test
    void closeEndsHealthAndRefusesNewCalls() throws Exception {
        server.setServing(true);
        server.close();
        assertThatThrownBy(() -> health(""))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }
}
