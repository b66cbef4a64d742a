// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.AgentBinding;
import io.kubeverdict.controlplane.auth.BearerTokenInterceptor;
import io.kubeverdict.controlplane.auth.CachingTokenReviewer;
import io.kubeverdict.controlplane.auth.InspectionAccess;
import io.kubeverdict.controlplane.auth.InspectionScope;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.auth.Review;
import io.kubeverdict.controlplane.auth.TokenReviewLimits;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.inspect.InspectionService;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.GetPolicyRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PolicySource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The console's HTTP edge with a plain socket: who is let in (loopback, a reviewed token, nobody
 * else; a refused token refused by the real token interceptor in-process), the strict headers on
 * every answer, read-only, and a page without inline script.
 */
class ConsoleServerTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private LocalInspection inspection;
    private ConsoleServer console;
    private PolicySyncService sync;

    /** ListNodes as the real service asks: the caller's inspection scope first. */
    static final class ScopedNodes extends ControlPlaneInspectionGrpc.ControlPlaneInspectionImplBase {
        private final NodeAuthorizer authorizer;

        ScopedNodes(NodeAuthorizer authorizer) {
            this.authorizer = authorizer;
        }

        @Override
        public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> out) {
            InspectionScope scope = authorizer.inspectionScope();
            if (scope.refusal() != null) {
                out.onError(scope.refusal().asRuntimeException());
                return;
            }
            out.onNext(ListNodesResponse.newBuilder()
                    .addNodes(NodeStatus.newBuilder().setNode("node-<b>1</b>").setInSync(true))
                    .build());
            out.onCompleted();
        }
    }

    private void start(boolean tokens, List<ServerInterceptor> interceptors, NodeAuthorizer authorizer)
            throws IOException {
        start(tokens, interceptors, new ScopedNodes(authorizer));
    }

    private void start(boolean tokens, List<ServerInterceptor> interceptors, BindableService service)
            throws IOException {
        inspection = LocalInspection.start(service, interceptors);
        console = ConsoleServer.start(new InetSocketAddress("0.0.0.0", 0), inspection, tokens);
    }

    /** The real inspection service over a calculation holding one NetworkPolicy with a hostile label. */
    private InspectionService policies(NodeAuthorizer authorizer) {
        SnapshotHub hub = new SnapshotHub();
        sync = new PolicySyncService(
                hub,
                new ControlPlaneMetrics(new SimpleMeterRegistry()),
                authorizer,
                Executors.newSingleThreadExecutor(),
                PolicySyncService.Options.defaults());
        IncrementalPolicyCalculator calculator = new IncrementalPolicyCalculator();
        calculator.upsertPolicy(Objects.policy("shop", """
                metadata: {name: shop-only, labels: {team: "<script>alert(1)</script>"}}
                spec: {podSelector: {}, policyTypes: [Ingress], ingress: [{from: [{podSelector: {}}]}]}
                """));
        InspectionService service = new InspectionService(hub, sync, authorizer);
        service.servePoliciesFrom(calculator.policySources());
        return service;
    }

    private static BearerTokenInterceptor rejectingTokens() {
        return new BearerTokenInterceptor(
                new CachingTokenReviewer(token -> Review.rejected("token not accepted")),
                new TokenReviewLimits(TokenReviewLimits.Config.defaults(), System::nanoTime),
                new AgentBinding(
                        "kube-system",
                        "kube-verdict-agent",
                        (ns, name) -> null,
                        InspectionAccess.subjectAccessReviews(null)),
                new SimpleMeterRegistry());
    }

    @AfterEach
    void stop() throws Exception {
        if (console != null) {
            console.close();
        }
        if (inspection != null) {
            inspection.close();
        }
        if (sync != null) {
            sync.close();
        }
    }

    record Answer(int status, String head, String body) {}

    /** One HTTP/1.1 request to the console at {@code address}, read to the end. */
    private Answer get(InetAddress address, String method, String path, String host, String authorization)
            throws IOException {
        try (Socket s = new Socket(address, console.port())) {
            s.setSoTimeout(20_000);
            String request = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n"
                    + (authorization == null ? "" : "Authorization: " + authorization + "\r\n") + "\r\n";
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            try (InputStream in = s.getInputStream()) {
                String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                int split = all.indexOf("\r\n\r\n");
                String head = all.substring(0, split);
                // Header names as the JDK server spells them ("Content-security-policy"): compare in lower case.
                return new Answer(
                        Integer.parseInt(head.split(" ")[1]), head.toLowerCase(Locale.ROOT), all.substring(split + 4));
            }
        }
    }

    private Answer get(String path) throws IOException {
        return get(InetAddress.getLoopbackAddress(), "GET", path, "localhost:" + console.port(), null);
    }

    /** An address of this machine that is not loopback: what a request from elsewhere comes from. */
    private static InetAddress nonLoopback() throws IOException {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nic.isUp() && !nic.isLoopback()) {
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
                        return a;
                    }
                }
            }
        }
        throw new AssertionError("this machine has no non-loopback IPv4 address to test from");
    }

    @Test
    void thePageHasStrictHeadersAndNoInlineScript() throws Exception {
        start(false, List.of(), NodeAuthorizer.allowAll());
        Answer page = get("/");
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.head())
                .contains("content-security-policy: " + ConsoleServer.CSP)
                .contains("x-content-type-options: nosniff")
                .contains("x-frame-options: deny");
        assertThat(ConsoleServer.CSP).doesNotContain("unsafe").doesNotContain("http");
        assertThat(page.body()).contains("<script src=\"console.js\" defer></script>");
        assertThat(Pattern.compile("<script(?![^>]*\\bsrc=)")
                        .matcher(page.body())
                        .find())
                .as("no inline script")
                .isFalse();
        assertThat(page.body())
                .doesNotContain("style=")
                .doesNotContain("http://")
                .doesNotContain("https://");
        assertThat(get("/console.js").body()).contains("textContent").doesNotContain("innerHTML");
        assertThat(get("/console.css").status()).isEqualTo(200);
        assertThat(get("/../etc/passwd").status()).isEqualTo(404);
    }

    @Test
    void aLoopbackViewerReadsTheStateAsJson() throws Exception {
        start(false, List.of(), NodeAuthorizer.allowAll());
        Answer nodes = get("/api/nodes");
        assertThat(nodes.status()).isEqualTo(200);
        assertThat(nodes.head()).contains("application/json").contains("content-security-policy");
        assertThat(nodes.body()).contains("\"node\":\"node-\\u003cb\\u003e1\\u003c/b\\u003e\"");
    }

    @Test
    void aRequestWithoutCredentialsFromElsewhereIsRefused() throws Exception {
        start(false, List.of(), NodeAuthorizer.allowAll());
        InetAddress other = nonLoopback();
        Answer refused = get(other, "GET", "/api/nodes", other.getHostAddress() + ":" + console.port(), null);
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.head()).contains("www-authenticate: bearer");
        assertThat(refused.body()).contains("only on loopback").doesNotContain("node-");
        // With --auth none a token proves nothing: still refused.
        Answer token = get(other, "GET", "/api/nodes", other.getHostAddress(), "Bearer anything");
        assertThat(token.status()).isEqualTo(401);
    }

    @Test
    void aRebindingHostOnLoopbackIsRefused() throws Exception {
        start(false, List.of(), NodeAuthorizer.allowAll());
        Answer rebound =
                get(InetAddress.getLoopbackAddress(), "GET", "/api/nodes", "attacker.example:" + console.port(), null);
        assertThat(rebound.status()).isEqualTo(403);
        assertThat(rebound.body()).doesNotContain("node-");
    }

    @Test
    void theConsoleIsReadOnly() throws Exception {
        start(false, List.of(), NodeAuthorizer.allowAll());
        Answer post = get(InetAddress.getLoopbackAddress(), "POST", "/api/nodes", "localhost", null);
        assertThat(post.status()).isEqualTo(405);
    }

    @Test
    void aPolicyIsItsObjectInYamlAsTheCalculationHoldsIt() throws Exception {
        start(false, List.of(), policies(NodeAuthorizer.allowAll()));
        Answer policy = get("/api/policy?tier=default&name=shop%2Fshop-only");
        assertThat(policy.status()).as(policy.body()).isEqualTo(200);
        assertThat(policy.head()).contains("application/json").contains("x-content-type-options: nosniff");
        JsonNode json = JSON.readTree(policy.body());
        assertThat(json.path("kind").asString()).isEqualTo("NetworkPolicy");
        assertThat(json.path("namespace").asString()).isEqualTo("shop");
        assertThat(json.path("name").asString()).isEqualTo("shop-only");
        assertThat(json.path("staged").asBoolean()).isFalse();
        assertThat(json.path("yaml").asString())
                .contains("kind: \"NetworkPolicy\"")
                .contains("name: \"shop-only\"")
                .contains("policyTypes:")
                .contains("<script>alert(1)</script>");
        assertThat(policy.body()).as("markup escaped in the JSON itself").doesNotContain("<script");
        // The same object by its staged name: a staged object is keyed by its own name.
        assertThat(get("/api/policy?tier=default&name=staged%3Ashop%2Fshop-only")
                        .status())
                .isEqualTo(200);
    }

    @Test
    void aMissingOrHostilePolicyNameIsNotFoundAndNeverReflectedAsMarkup() throws Exception {
        start(false, List.of(), policies(NodeAuthorizer.allowAll()));
        Answer missing = get("/api/policy?tier=default&name=shop%2Fnope");
        assertThat(missing.status()).isEqualTo(404);
        assertThat(JSON.readTree(missing.body()).path("message").asString())
                .isEqualTo("policy default/shop/nope is not held by the control plane");
        Answer hostile = get("/api/policy?tier=admin&name=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E");
        assertThat(hostile.status()).isEqualTo(404);
        assertThat(hostile.head()).contains("content-type: application/json").contains("nosniff");
        assertThat(hostile.body()).doesNotContain("<img").contains("\\u003Cimg");
        assertThat(JSON.readTree(hostile.body()).path("message").asString()).contains("<img src=x onerror=alert(1)>");
        assertThat(get("/api/policy?tier=other&name=a").status()).isEqualTo(404);
        assertThat(get("/api/policy?tier=default").status()).isEqualTo(400);
        assertThat(get("/api/policy?tier=default&name=" + "x".repeat(500)).status())
                .isEqualTo(400);
    }

    @Test
    void aPolicyIsReadThroughTheSameGateAsEveryOtherCall() throws Exception {
        start(true, List.of(rejectingTokens()), policies(NodeAuthorizer.requireAgentToken()));
        InetAddress other = nonLoopback();
        String path = "/api/policy?tier=default&name=shop%2Fshop-only";
        Answer none = get(other, "GET", path, other.getHostAddress(), null);
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.body()).doesNotContain("shop-only\"").doesNotContain("policyTypes");
        Answer bad = get(other, "GET", path, other.getHostAddress(), "Bearer not-a-token");
        assertThat(bad.status()).isEqualTo(401);
        assertThat(bad.body()).contains("token not accepted").doesNotContain("policyTypes");
        Answer rebound = get(InetAddress.getLoopbackAddress(), "GET", path, "attacker.example", null);
        assertThat(rebound.status()).isEqualTo(403);
        Answer loopback = get(path);
        assertThat(loopback.status()).as(loopback.body()).isEqualTo(200);
        assertThat(loopback.body()).contains("policyTypes");
    }

    @Test
    void aCallerLimitedToSomeNodesOrUnknownMayNotReadPolicies() {
        assertThat(getPolicyStatus(policies(NodeAuthorizer.requireNodeCertificate())))
                .as("a node's certificate reads its own node only")
                .isEqualTo(Status.Code.PERMISSION_DENIED);
        sync.close();
        assertThat(getPolicyStatus(policies(NodeAuthorizer.requireAgentToken())))
                .as("no caller at all")
                .isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    private static Status.Code getPolicyStatus(InspectionService service) {
        Throwable[] error = new Throwable[1];
        service.getPolicy(
                GetPolicyRequest.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("default").setName("shop/shop-only"))
                        .build(),
                new StreamObserver<>() {
                    @Override
                    public void onNext(PolicySource value) {
                        throw new AssertionError("answered " + value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        error[0] = t;
                    }

                    @Override
                    public void onCompleted() {}
                });
        return Status.fromThrowable(error[0]).getCode();
    }

    @Test
    void withTokensARejectedTokenIsRefusedByTheTokenInterceptorAndLoopbackIsLetIn() throws Exception {
        BearerTokenInterceptor tokens = rejectingTokens();
        start(true, List.of(tokens), NodeAuthorizer.requireAgentToken());
        InetAddress other = nonLoopback();
        Answer bad = get(other, "GET", "/api/nodes", other.getHostAddress(), "Bearer not-a-token");
        assertThat(bad.status()).isEqualTo(401);
        assertThat(bad.body()).contains("token not accepted");
        Answer none = get(other, "GET", "/api/nodes", other.getHostAddress(), null);
        assertThat(none.status()).isEqualTo(401);
        Answer loopback = get("/api/nodes");
        assertThat(loopback.status()).as(loopback.body()).isEqualTo(200);
    }
}
