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
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
                .build()
                .start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                .usePlaintext()
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    private ServingStatus health(String service) {
        return HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build())
                .getStatus();
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
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void theGivenServiceIsServed() {
        assertThatThrownBy(() -> AgentInspectionGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .getStatus(AgentStatusRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }

    @Test
    void reflectionV1AndV1alphaBothListEveryService() throws Exception {
        List<String> expected = List.of(
                AgentInspectionGrpc.SERVICE_NAME,
                "grpc.health.v1.Health",
                "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection");
        assertThat(listServicesV1()).containsAll(expected);
        assertThat(listServicesV1alpha()).containsAll(expected);
    }

    private List<String> listServicesV1() throws Exception {
        CompletableFuture<List<String>> names = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> call =
                io.grpc.reflection.v1.ServerReflectionGrpc.newStub(channel)
                        .serverReflectionInfo(new StreamObserver<>() {
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
        call.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
                .setListServices("")
                .build());
        try {
            return names.get(10, TimeUnit.SECONDS);
        } finally {
            call.onCompleted();
        }
    }

    private List<String> listServicesV1alpha() throws Exception {
        CompletableFuture<List<String>> names = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> call =
                io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel)
                        .serverReflectionInfo(new StreamObserver<>() {
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
        call.onNext(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setListServices("")
                .build());
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
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    /**
     * Handlers that block (as a TokenReview does) hold at most the pool's threads; the other calls
     * wait in line and are answered once threads free up, instead of each getting a thread.
     */
    @Test
    void handlersRunOnABoundedPoolAndTheRestWaitTheirTurn() throws Exception {
        int threads = 4;
        int calls = 40;
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        try (GrpcServer bounded = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .limits(ServerLimits.defaults().withExecutorThreads(threads))
                .service(new AgentInspectionGrpc.AgentInspectionImplBase() {
                    @Override
                    public void getStatus(AgentStatusRequest request, StreamObserver<AgentStatus> out) {
                        mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                        try {
                            release.await(60, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        running.decrementAndGet();
                        out.onNext(AgentStatus.getDefaultInstance());
                        out.onCompleted();
                    }
                })
                .build()
                .start()) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", bounded.port())
                    .usePlaintext()
                    .build();
            try {
                List<CompletableFuture<Status>> results = new ArrayList<>();
                for (int i = 0; i < calls; i++) {
                    CompletableFuture<Status> done = new CompletableFuture<>();
                    AgentInspectionGrpc.newStub(ch)
                            .withDeadlineAfter(60, TimeUnit.SECONDS)
                            .getStatus(AgentStatusRequest.getDefaultInstance(), new StreamObserver<>() {
                                @Override
                                public void onNext(AgentStatus value) {}

                                @Override
                                public void onError(Throwable t) {
                                    done.complete(Status.fromThrowable(t));
                                }

                                @Override
                                public void onCompleted() {
                                    done.complete(Status.OK);
                                }
                            });
                    results.add(done);
                }
                // Give an unbounded pool every chance to start them all (it does, at once); a
                // bounded one never gets past its threads, so this wait always runs out there.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (running.get() < calls && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(mostRunning.get()).as("handlers running at once").isLessThanOrEqualTo(threads);
                release.countDown();
                for (CompletableFuture<Status> r : results) {
                    assertThat(r.get(60, TimeUnit.SECONDS).getCode())
                            .as("every call is answered in turn")
                            .isEqualTo(Status.Code.OK);
                }
            } finally {
                release.countDown();
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
