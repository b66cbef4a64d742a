// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
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
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.service.TestDoubleCalculator;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.testing.tier.MockApiTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Agents authenticated by projected ServiceAccount tokens against fabric8's mock API server: the
 * cluster's objects in CRUD mode, TokenReview answered from what each test records (a token ->
 * the status the API server would give), real gRPC over a socket. A caller may sync and report
 * only for the node its token is bound to.
 */
@MockKubernetes
@MockApiTest
class TokenAuthMockClusterTest {
    private static final String AGENT = "system:serviceaccount:kube-verdict:kube-verdict-agent";

    KubernetesMockServer server;
    KubernetesClient client;
    private ControlPlane cp;
    private ManagedChannel channel;
    /** What the API server answers for each token; an unknown token is not authenticated. */
    private final Map<String, TokenReviewStatus> answers = new ConcurrentHashMap<>();

    private final AtomicInteger reviews = new AtomicInteger();
    /** Users the API server allows to inspect (SubjectAccessReview). */
    private final java.util.Set<String> inspectors = ConcurrentHashMap.newKeySet();

    static Pod pod(String ns, String name, String uid, String node, boolean hostNetwork) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withUid(uid)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .withHostNetwork(hostNetwork)
                .addNewContainer()
                .withName("c")
                .withImage("i")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(hostNetwork ? null : "10.0.0." + Math.abs(name.hashCode() % 200))
                .endStatus()
                .build();
    }

    static TokenReviewStatus agentOnNode(String node) {
        return new TokenReviewStatusBuilder()
                .withAuthenticated(true)
                .withAudiences("kube-verdict")
                .withNewUser()
                .withUsername(AGENT)
                .withGroups("system:serviceaccounts")
                .withExtra(Map.of(
                        Review.NODE_NAME,
                        List.of(node),
                        Review.POD_NAME,
                        List.of("agent-" + node),
                        Review.POD_UID,
                        List.of("uid-" + node)))
                .endUser()
                .build();
    }

    static TokenReviewStatus agentOfPod(String pod, String uid) {
        return new TokenReviewStatusBuilder()
                .withAuthenticated(true)
                .withAudiences("kube-verdict")
                .withNewUser()
                .withUsername(AGENT)
                .withExtra(Map.of(Review.POD_NAME, List.of(pod), Review.POD_UID, List.of(uid)))
                .endUser()
                .build();
    }

    @BeforeEach
    void startControlPlane() throws Exception {
        server.expect()
                .post()
                .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
                .andReply(201, this::answer)
                .always();
        server.expect()
                .post()
                .withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews")
                .andReply(201, this::authorize)
                .always();
        client.pods()
                .inNamespace("kube-verdict")
                .resource(pod("kube-verdict", "agent-n1", "uid-n1", "n1", true))
                .create();
        client.pods()
                .inNamespace("kube-verdict")
                .resource(pod("kube-verdict", "agent-n2", "uid-n2", "n2", true))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "web", "uid-web", "n1", false))
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
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    private Object answer(RecordedRequest request) {
        reviews.incrementAndGet();
        TokenReview asked =
                client.getKubernetesSerialization().unmarshal(request.getBody().readUtf8(), TokenReview.class);
        assertThat(asked.getSpec().getAudiences())
                .as("the control plane asks for its audience")
                .containsExactly("kube-verdict");
        TokenReviewStatus status = answers.getOrDefault(
                asked.getSpec().getToken(),
                new TokenReviewStatusBuilder()
                        .withAuthenticated(false)
                        .withError("invalid bearer token")
                        .build());
        asked.setStatus(status);
        return asked;
    }

    /** The API server authenticates "token-of-USER" as USER (a service account). */
    private void acceptTokensOf(String... users) {
        for (String user : users) {
            answers.put(
                    "token-of-" + user,
                    new TokenReviewStatusBuilder()
                            .withAuthenticated(true)
                            .withAudiences("kube-verdict")
                            .withNewUser()
                            .withUsername(user)
                            .withGroups("system:serviceaccounts")
                            .endUser()
                            .build());
        }
    }

    /** The API server's authorizer: only the users in {@link #inspectors} may get the inspection path. */
    private Object authorize(RecordedRequest request) {
        SubjectAccessReview asked =
                client.getKubernetesSerialization().unmarshal(request.getBody().readUtf8(), SubjectAccessReview.class);
        var attributes = asked.getSpec().getNonResourceAttributes();
        boolean allowed = attributes != null
                && attributes.getPath().equals(InspectionAccess.PATH)
                && attributes.getVerb().equals("get")
                && inspectors.contains(asked.getSpec().getUser());
        asked.setStatus(new SubjectAccessReviewStatusBuilder()
                .withAllowed(allowed)
                .withReason(allowed ? "bound to kube-verdict-inspector" : "no RBAC policy matched")
                .build());
        return asked;
    }

    /** A channel whose calls carry whatever token the reference holds at the time of the call. */
    private Channel withToken(AtomicReference<String> token) {
        ClientInterceptor bearer = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(
                    MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        headers.put(BearerTokenInterceptor.AUTHORIZATION, "Bearer " + token.get());
                        super.start(listener, headers);
                    }
                };
            }
        };
        return ClientInterceptors.intercept(channel, bearer);
    }

    private Channel withToken(String token) {
        return withToken(new AtomicReference<>(token));
    }

    private static void report(Channel ch, String node) {
        PolicySyncGrpc.newBlockingStub(ch)
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .reportApplied(AppliedReport.newBuilder()
                        .setNode(node)
                        .setAppliedSequence(1)
                        .build());
    }

    private static Status refusal(Channel ch, String node) throws InterruptedException {
        try (TestAgent a = TestAgent.connect(ch, node, true)) {
            return a.readUntilEnd();
        }
    }

    @Test
    void theRightTokenSyncsAndReportsItsOwnNodeAndNoOther() throws Exception {
        answers.put("token-n1", agentOnNode("n1"));
        Channel n1 = withToken("token-n1");
        try (TestAgent agent = TestAgent.connect(n1, "n1", true)) {
            agent.readUntilInSync();
            assertThat(agent.state("n1").getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("web");
            report(n1, "n1");
        }
        Status other = refusal(n1, "n2");
        assertThat(other.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(other.getDescription()).contains("bound to node 'n1', not 'n2'");
        assertThatThrownBy(() -> report(n1, "n2"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThat(reviews.get()).as("reviews are cached briefly").isEqualTo(1);
    }

    @Test
    void noTokenAnUnknownOrExpiredTokenOrAnotherAccountIsRefused() throws Exception {
        answers.put(
                "expired",
                new TokenReviewStatusBuilder()
                        .withAuthenticated(false)
                        .withError("[invalid bearer token, service account token has expired]")
                        .build());
        answers.put(
                "someone-else",
                new TokenReviewStatusBuilder()
                        .withAuthenticated(true)
                        .withAudiences("kube-verdict")
                        .withNewUser()
                        .withUsername("system:serviceaccount:default:builder")
                        .withExtra(Map.of(Review.NODE_NAME, List.of("n1")))
                        .endUser()
                        .build());
        answers.put(
                "wrong-audience",
                new TokenReviewStatusBuilder(agentOnNode("n1"))
                        .withAudiences("https://kubernetes.default.svc")
                        .build());

        Status none = refusal(channel, "n1");
        assertThat(none.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(none.getDescription()).contains("bearer token is required");
        Status unknown = refusal(withToken("garbage"), "n1");
        assertThat(unknown.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(unknown.getDescription()).contains("invalid bearer token");
        Status expired = refusal(withToken("expired"), "n1");
        assertThat(expired.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(expired.getDescription()).contains("has expired");
        Status other = refusal(withToken("someone-else"), "n1");
        assertThat(other.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(other.getDescription())
                .contains("system:serviceaccount:default:builder is not the agent's ServiceAccount");
        Status audience = refusal(withToken("wrong-audience"), "n1");
        assertThat(audience.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(audience.getDescription()).contains("not for audience 'kube-verdict'");
        assertThatThrownBy(() -> report(withToken("garbage"), "n1"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
    }

    @Test
    void withoutANodeClaimThePodDecidesAndATokenWhosePodMovedIsRefused() throws Exception {
        // The API server's uid, as the informer sees it (the mock server assigns its own).
        String uid = client.pods()
                .inNamespace("kube-verdict")
                .withName("agent-n2")
                .get()
                .getMetadata()
                .getUid();
        answers.put("pod-token", agentOfPod("agent-n2", uid));
        Channel ch = withToken("pod-token");
        try (TestAgent agent = TestAgent.connect(ch, "n2", true)) {
            agent.readUntilInSync();
        }
        assertThat(refusal(ch, "n1").getDescription()).contains("bound to node 'n2', not 'n1'");

        // The pod is deleted and created again under its name, on the other node: the token's pod is gone.
        client.pods().inNamespace("kube-verdict").withName("agent-n2").delete();
        client.pods()
                .inNamespace("kube-verdict")
                .resource(pod("kube-verdict", "agent-n2", "uid-n2-again", "n1", true))
                .create();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Status moved;
        do {
            Thread.sleep(50);
            moved = refusal(ch, "n1");
        } while (moved.getDescription() != null
                && moved.getDescription().contains("bound to node")
                && System.nanoTime() < deadline);
        assertThat(moved.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(moved.getDescription()).contains("agent-n2 (uid " + uid + ") is gone");
        assertThat(refusal(ch, "n2").getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    }

    @Test
    void aRotatedTokenKeepsWorkingAndTheOpenStreamStays() throws Exception {
        answers.put("first", agentOnNode("n1"));
        answers.put("second", agentOnNode("n1"));
        AtomicReference<String> file = new AtomicReference<>("first");
        Channel ch = withToken(file);
        try (TestAgent agent = TestAgent.connect(ch, "n1", true)) {
            agent.readUntilInSync();
            report(ch, "n1");
            file.set("second"); // the kubelet rewrote the token file
            answers.remove("first"); // and the old token is no longer accepted
            report(ch, "n1");
            client.pods()
                    .inNamespace("x")
                    .resource(pod("x", "api", "uid-api", "n1", false))
                    .create();
            // The stream opened with the first token still delivers.
            while (agent.state("n1").getEndpointsList().stream()
                    .noneMatch(e -> e.getId().getPod().equals("api"))) {
                agent.next();
            }
        }
    }

    @Test
    void anAgentTokenInspectsOnlyItsOwnNode() {
        answers.put("token-n1", agentOnNode("n1"));
        var inspect = ControlPlaneInspectionGrpc.newBlockingStub(withToken("token-n1"))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThat(inspect.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList())
                .extracting(n -> n.getNode())
                .containsOnly("n1");
        assertThat(inspect.getSnapshot(
                                GetSnapshotRequest.newBuilder().setNode("n1").build())
                        .getNode())
                .isEqualTo("n1");
        assertThatThrownBy(() -> inspect.getSnapshot(
                        GetSnapshotRequest.newBuilder().setNode("n2").build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }

    @Test
    void aTokenlessClientOnLoopbackInspectsEveryNodeButSyncsNone() throws Exception {
        // kubectl port-forward arrives on the pod's loopback: the API server checked pods/portforward.
        var local = ControlPlaneInspectionGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThat(local.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList())
                .extracting(n -> n.getNode())
                .contains("n1", "n2");
        assertThat(local.getSnapshot(
                                GetSnapshotRequest.newBuilder().setNode("n2").build())
                        .getNode())
                .isEqualTo("n2");
        Status sync = refusal(channel, "n1");
        assertThat(sync.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThatThrownBy(() -> report(channel, "n1"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        assertThat(reviews.get()).as("nothing to review").isZero();
    }

    @Test
    void anotherUsersTokenInspectsNothingAndIsToldSoRatherThanGivenAnEmptyList() {
        answers.put(
                "someone-else",
                new TokenReviewStatusBuilder()
                        .withAuthenticated(true)
                        .withAudiences("kube-verdict")
                        .withNewUser()
                        .withUsername("system:serviceaccount:default:builder")
                        .endUser()
                        .build());
        var other = ControlPlaneInspectionGrpc.newBlockingStub(withToken("someone-else"))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> other.listNodes(ListNodesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(e.getStatus().getDescription())
                            .contains("system:serviceaccount:default:builder may not inspect");
                });
        var garbage = ControlPlaneInspectionGrpc.newBlockingStub(withToken("garbage"))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> garbage.getSnapshot(
                        GetSnapshotRequest.newBuilder().setNode("n1").build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
    }

    @Test
    void aUserTheApiServerAllowsInspectsEveryNodeAndOneItDeniesIsToldWhy() throws Exception {
        String inspector = "system:serviceaccount:ops:inspector";
        String builder = "system:serviceaccount:ops:builder";
        inspectors.add(inspector);
        acceptTokensOf(inspector, builder);
        var allowed = ControlPlaneInspectionGrpc.newBlockingStub(withToken("token-of-" + inspector))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThat(allowed.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList())
                .extracting(n -> n.getNode())
                .contains("n1", "n2");
        assertThat(allowed.getSnapshot(
                                GetSnapshotRequest.newBuilder().setNode("n2").build())
                        .getNode())
                .isEqualTo("n2");
        assertThat(refusal(withToken("token-of-" + inspector), "n1").getCode())
                .as("inspection is not Sync")
                .isEqualTo(Status.Code.PERMISSION_DENIED);

        var denied = ControlPlaneInspectionGrpc.newBlockingStub(withToken("token-of-" + builder))
                .withDeadlineAfter(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> denied.listNodes(ListNodesRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                    assertThat(e.getStatus().getDescription())
                            .contains(builder + " may not inspect")
                            .contains("get " + InspectionAccess.PATH)
                            .contains("no RBAC policy matched")
                            .contains("kube-verdict-inspector");
                });
    }

    /**
     * The console from another address: a token the API server allows to inspect reads every node
     * (TokenReview, then SubjectAccessReview, as for the gRPC API); one it does not allow is told why.
     */
    @Test
    void theConsoleLetsInATokenTheApiServerAllowsToInspectAndRefusesOthers() throws Exception {
        String inspector = "system:serviceaccount:ops:console-viewer";
        String builder = "system:serviceaccount:ops:console-builder";
        inspectors.add(inspector);
        acceptTokensOf(inspector, builder);
        int port = cp.serveConsole(new InetSocketAddress("0.0.0.0", 0));
        InetAddress elsewhere = Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
                .filter(nic -> !nic.getName().equals("lo"))
                .flatMap(nic -> Collections.list(nic.getInetAddresses()).stream())
                .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
                .findFirst()
                .orElseThrow(() -> new AssertionError("no non-loopback IPv4 address to call the console from"));
        HttpClient http = HttpClient.newHttpClient();
        Function<String, HttpResponse<String>> asUser = user -> {
            try {
                return http.send(
                        HttpRequest.newBuilder(
                                        URI.create("http://" + elsewhere.getHostAddress() + ":" + port + "/api/nodes"))
                                .header("Authorization", "Bearer token-of-" + user)
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        var allowed = asUser.apply(inspector);
        assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(200);
        assertThat(allowed.body()).contains("\"n1\"", "\"n2\"");
        var denied = asUser.apply(builder);
        assertThat(denied.statusCode()).as(denied.body()).isEqualTo(403);
        assertThat(denied.body()).contains(builder + " may not inspect").contains("kube-verdict-inspector");
    }

    @Test
    void onlyALoopbackPeerCountsAsLoopback() throws Exception {
        assertThat(BearerTokenInterceptor.onLoopback(new InetSocketAddress("127.0.0.1", 1)))
                .isTrue();
        assertThat(BearerTokenInterceptor.onLoopback(new InetSocketAddress("::1", 1)))
                .isTrue();
        assertThat(BearerTokenInterceptor.onLoopback(
                        new InetSocketAddress(InetAddress.getByName("::ffff:127.0.0.1"), 1)))
                .as("IPv4-mapped")
                .isTrue();
        assertThat(BearerTokenInterceptor.onLoopback(new InetSocketAddress("10.0.0.7", 1)))
                .isFalse();
        assertThat(BearerTokenInterceptor.onLoopback(new InetSocketAddress("fd00::7", 1)))
                .isFalse();
        assertThat(BearerTokenInterceptor.onLoopback(InetSocketAddress.createUnresolved("localhost", 1)))
                .as("unresolved: no address to judge")
                .isFalse();
        assertThat(BearerTokenInterceptor.onLoopback(null)).isFalse();
    }
}
