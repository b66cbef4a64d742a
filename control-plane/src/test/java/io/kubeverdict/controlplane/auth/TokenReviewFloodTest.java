// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.service.TestDoubleCalculator;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.AppliedAck;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An unauthenticated caller floods ReportApplied with a fresh random token per call (finding M7):
 * the control plane asks the API server (fabric8's mock, which counts) only as often as the
 * per-address review limit allows, refuses the rest before any review, and an agent at another
 * address is still reviewed and served meanwhile. Callers are told apart by their loopback
 * address (127.0.0.x); the review limit applies to loopback too.
 */
@MockKubernetes
@MockApiTest
class TokenReviewFloodTest {
    /** The documented defaults: 5 reviews per second and address, bursts of 10. */
    private static final int BURST = 10;

    private static final double PER_SECOND = 5;
    private static final int FLOOD = 400;

    KubernetesMockServer server;
    KubernetesClient client;
    private ControlPlane cp;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final AtomicInteger reviews = new AtomicInteger();
    private final ConcurrentHashMap<String, Boolean> agentTokens = new ConcurrentHashMap<>();

    @BeforeEach
    void startControlPlane() throws Exception {
        server.expect()
                .post()
                .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
                .andReply(201, this::answer)
                .always();
        client.pods()
                .inNamespace("kube-verdict")
                .resource(TokenAuthMockClusterTest.pod("kube-verdict", "agent-n1", "uid-n1", "n1", true))
                .create();
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        null,
                        PolicySyncService.Options.defaults(),
                        new ControlPlane.Auth.Tokens("kube-verdict", "kube-verdict", "kube-verdict-agent")),
                new TestDoubleCalculator(),
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO, Duration.ofMillis(100)));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    private Object answer(RecordedRequest request) {
        reviews.incrementAndGet();
        TokenReview asked =
                client.getKubernetesSerialization().unmarshal(request.getBody().readUtf8(), TokenReview.class);
        asked.setStatus(
                agentTokens.containsKey(asked.getSpec().getToken())
                        ? TokenAuthMockClusterTest.agentOnNode("n1")
                        : new TokenReviewStatusBuilder()
                                .withAuthenticated(false)
                                .withError("invalid bearer token")
                                .build());
        return asked;
    }

    private ManagedChannel channelFrom(String localAddress) throws Exception {
        InetAddress local = InetAddress.getByName(localAddress);
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
                    @Override
                    public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
                        return new InetSocketAddress(local, 0);
                    }
                })
                .build();
        channels.add(c);
        return c;
    }

    /** Every call carries a token the supplier gives at the time of the call. */
    private static Channel withTokens(Channel channel, java.util.function.Supplier<String> tokens) {
        return ClientInterceptors.intercept(channel, new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                    MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        headers.put(BearerTokenInterceptor.AUTHORIZATION, "Bearer " + tokens.get());
                        super.start(listener, headers);
                    }
                };
            }
        });
    }

    private static CompletableFuture<Status> report(Channel ch, String node) {
        CompletableFuture<Status> done = new CompletableFuture<>();
        PolicySyncGrpc.newStub(ch)
                .withDeadlineAfter(60, TimeUnit.SECONDS)
                .reportApplied(
                        AppliedReport.newBuilder()
                                .setNode(node)
                                .setAppliedSequence(1)
                                .build(),
                        new io.grpc.stub.StreamObserver<AppliedAck>() {
                            @Override
                            public void onNext(AppliedAck value) {}

                            @Override
                            public void onError(Throwable t) {
                                done.complete(Status.fromThrowable(t));
                            }

                            @Override
                            public void onCompleted() {
                                done.complete(Status.OK);
                            }
                        });
        return done;
    }

    @Test
    void randomTokensFromOneAddressCostAtMostItsReviewBudgetAndAnAgentElsewhereIsStillServed() throws Exception {
        Channel flooder = withTokens(channelFrom("127.0.0.7"), () -> "random-" + UUID.randomUUID());
        long start = System.nanoTime();
        List<CompletableFuture<Status>> calls = new ArrayList<>();
        for (int i = 0; i < FLOOD; i++) {
            calls.add(report(flooder, "n1"));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;

        for (CompletableFuture<Status> c : calls) {
            assertThat(c.get().getCode())
                    .as("no random token is let in")
                    .isIn(Status.Code.UNAUTHENTICATED, Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNAVAILABLE);
        }
        // An upper bound that only grows with a slow machine: the burst, plus the refill over the
        // flood's duration, plus one for rounding.
        assertThat(reviews.get())
                .as("TokenReviews asked for %d random tokens in %.1f s", FLOOD, seconds)
                .isLessThanOrEqualTo(BURST + (int) Math.ceil(PER_SECOND * seconds) + 1);

        // Another address has its own budget: the agent's token is reviewed, it syncs and reports.
        agentTokens.put("token-n1", true);
        Channel agent = withTokens(channelFrom("127.0.0.1"), () -> "token-n1");
        try (TestAgent a = TestAgent.connect(agent, "n1", true)) {
            a.readUntilInSync();
            assertThat(report(agent, "n1").get(60, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        }
    }

    @Test
    void theSameUnknownTokenIsReviewedOnceWhileItsRejectionIsKept() throws Exception {
        Channel repeater = withTokens(channelFrom("127.0.0.8"), () -> "the-same-garbage");
        for (int i = 0; i < 50; i++) {
            assertThat(report(repeater, "n1").get(60, TimeUnit.SECONDS).getCode())
                    .isEqualTo(Status.Code.UNAUTHENTICATED);
        }
        // Kept 5 s: a slower machine may need a second review, never fifty.
        assertThat(reviews.get()).isBetween(1, 3);
    }
}
