// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatusBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import io.kubeverdict.controlplane.autotls.AutoTls;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.receipts.PodReadinessGates;
import io.kubeverdict.controlplane.receipts.ReceiptWriting;
import io.kubeverdict.controlplane.receipts.ReportingAgent;
import io.kubeverdict.controlplane.receipts.WriterLease;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The control plane's ClusterRole is derived from what the control plane really does: it runs
 * against fabric8's mock API server, every request it sends is recorded, and the permissions those
 * requests need must be exactly the ones deploy/ grants — no more (least privilege), no fewer.
 */
@MockKubernetes
@MockApiTest
class ControlPlaneRbacTest {
    private static final String USER_AGENT = "kube-verdict-rbac-under-test";

    KubernetesMockServer server;
    KubernetesClient client;
    private KubernetesClient patient;

    @AfterEach
    void closePatientClient() {
        if (patient != null) {
            patient.close();
        }
    }

    @Test
    void clusterRoleGrantsExactlyWhatTheControlPlaneUses() throws Exception {
        // A loaded 2-core CI machine can stall the mock server past the client's 10 s connect timeout.
        patient = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withConnectionTimeout(60_000)
                        .withRequestTimeout(60_000)
                        .build())
                .build();
        client = patient;
        // A cluster with an unusable policy, so the event recorder has something to report.
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName("a")
                        .withNamespace("x")
                        .addToLabels("app", "a")
                        .endMetadata()
                        .withNewSpec()
                        .addNewReadinessGate(PodReadinessGates.CONDITION)
                        .withNodeName("n1")
                        .addNewContainer()
                        .withName("c")
                        .withImage("i")
                        .endContainer()
                        .endSpec()
                        .withNewStatus()
                        .withPhase("Running")
                        .withPodIP("10.0.0.1")
                        .endStatus()
                        .build())
                .create();
        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .resource(new NetworkPolicyBuilder()
                        .withNewMetadata()
                        .withName("broken")
                        .withNamespace("x")
                        .endMetadata()
                        .withNewSpec()
                        .withNewPodSelector()
                        .endPodSelector()
                        .addNewIngress()
                        .addNewFrom()
                        .withNewIpBlock()
                        .withCidr("10.0.0.0/33")
                        .endIpBlock()
                        .endFrom()
                        .endIngress()
                        .endSpec()
                        .build())
                .create();
        // The admin-tier policy APIs are installed and hold an object each; a Node.
        AdminPolicyCrds.installAll(client);
        client.nodes().resource(HouseWorld.nodes().get(0)).create();
        for (GenericKubernetesResource p : List.of(HouseWorld.anp("""
                metadata: {name: a}
                spec: {priority: 1, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                """), HouseWorld.banp("""
                metadata: {name: default}
                spec: {subject: {namespaces: {}}, egress: [{action: Allow, to: [{nodes: {}}]}]}
                """), HouseWorld.cnp("""
                metadata: {name: c}
                spec: {tier: Admin, priority: 1, subject: {namespaces: {}}, ingress: [{action: Pass, from: [{namespaces: {}}]}]}
                """))) {
            AdminPolicyKind kind = AdminPolicyKind.of(p.getApiVersion(), p.getKind());
            client.genericKubernetesResources(kind.apiVersion(), kind.kind())
                    .resource(p)
                    .create();
        }

        // The API server's answer to the agent's token (CRUD mode cannot give a review its status).
        server.expect()
                .post()
                .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
                .andReply(201, r -> {
                    TokenReview review = client.getKubernetesSerialization()
                            .unmarshal(r.getBody().readUtf8(), TokenReview.class);
                    review.setStatus(
                            "operator-token".equals(review.getSpec().getToken())
                                    ? new TokenReviewStatusBuilder()
                                            .withAuthenticated(true)
                                            .withAudiences("kube-verdict")
                                            .withNewUser()
                                            .withUsername("system:serviceaccount:ops:inspector")
                                            .endUser()
                                            .build()
                                    : new TokenReviewStatusBuilder()
                                            .withAuthenticated(true)
                                            .withAudiences("kube-verdict")
                                            .withNewUser()
                                            .withUsername("system:serviceaccount:kube-verdict:kube-verdict-agent")
                                            .withExtra(java.util.Map.of(
                                                    "authentication.kubernetes.io/node-name", List.of("n1")))
                                            .endUser()
                                            .build());
                    return review;
                })
                .always();
        // ...and its authorizer's, for an operator's inspection (kube-verdict-inspector bound).
        server.expect()
                .post()
                .withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews")
                .andReply(201, r -> {
                    SubjectAccessReview review = client.getKubernetesSerialization()
                            .unmarshal(r.getBody().readUtf8(), SubjectAccessReview.class);
                    review.setStatus(new SubjectAccessReviewStatusBuilder()
                            .withAllowed(true)
                            .build());
                    return review;
                })
                .always();

        Set<ApiAccess> used = new TreeSet<>();
        Set<ApiAccess> awaited = Set.of(
                new ApiAccess("", "events", "create"),
                new ApiAccess("", "pods/status", "patch"),
                new ApiAccess("coordination.k8s.io", "leases", "patch"),
                new ApiAccess("policy.networking.k8s.io", "adminnetworkpolicies/status", "update"),
                new ApiAccess("policy.networking.k8s.io", "baselineadminnetworkpolicies/status", "update"),
                new ApiAccess("policy.networking.k8s.io", "clusternetworkpolicies/status", "update"),
                new ApiAccess("authentication.k8s.io", "tokenreviews", "create"),
                new ApiAccess("authorization.k8s.io", "subjectaccessreviews", "create"));
        // What the base installs with the control plane: auto TLS's objects, empty, for it to fill.
        for (String shipped : List.of(AutoTls.Settings.DEFAULT_SECRET, AutoTls.Settings.DEFAULT_CONFIG_MAP)) {
            HasMetadata object = DeployManifests.base().stream()
                    .filter(o -> o.getMetadata().getName().equals(shipped))
                    .findFirst()
                    .orElseThrow();
            client.resource(object).inNamespace("kube-verdict").create();
        }
        ManagedChannel agent = null;
        try (KubernetesClient underTest = new KubernetesClientBuilder()
                        .withConfig(new ConfigBuilder(client.getConfiguration())
                                .withUserAgent(USER_AGENT)
                                .build())
                        .build();
                ControlPlane cp = ControlPlane.start(
                        new ControlPlane.Config(
                                        new InetSocketAddress("127.0.0.1", 0),
                                        null,
                                        null,
                                        PolicySyncService.Options.defaults(),
                                        new ControlPlane.Auth.Tokens(
                                                "kube-verdict", "kube-verdict", "kube-verdict-agent"))
                                .withAutoTls(AutoTls.Settings.defaults(
                                        "kube-verdict",
                                        AutoTls.Settings.serviceNames("kube-verdict-control-plane", "kube-verdict"))),
                        new IncrementalPolicyCalculator(),
                        new ControlPlane.Source.Kubernetes(underTest, Duration.ZERO))) {
            cp.firstCalculation().get(60, TimeUnit.SECONDS);
            // Everything it writes from the receipts, with the writer Lease as in-cluster.
            cp.writeReceipts(
                    underTest,
                    new ReceiptWriting.Settings(
                            true,
                            true,
                            true,
                            WriterLease.Settings.defaults("kube-verdict", "replica-0"),
                            Duration.ofSeconds(60)));
            // An agent with its token, over the TLS the control plane made, trusting the CA bundle it
            // published (as the DaemonSet mounts it): the control plane reviews the token.
            Path bundle = Files.writeString(
                    Files.createTempFile("kube-verdict-ca", ".crt"),
                    client.configMaps()
                            .inNamespace("kube-verdict")
                            .withName(AutoTls.Settings.DEFAULT_CONFIG_MAP)
                            .get()
                            .getData()
                            .get("ca.crt"));
            bundle.toFile().deleteOnExit();
            agent = ClientChannels.open(
                    "127.0.0.1:" + cp.grpcPort(),
                    new ClientChannels.Tls(null, null, bundle, "kube-verdict-control-plane.kube-verdict.svc"));
            Metadata token = new Metadata();
            token.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer agent-token");
            // The agent applies its snapshot and stays connected: its pod's readiness gate is this
            // replica's to set (and the tokens it sends are reviewed).
            try (ReportingAgent a = ReportingAgent.connect(
                    ClientInterceptors.intercept(agent, MetadataUtils.newAttachHeadersInterceptor(token)), "n1")) {
                a.applyAll();
                // An operator's token: the control plane asks the API server whether it may inspect.
                Metadata operator = new Metadata();
                operator.put(
                        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer operator-token");
                assertThat(ControlPlaneInspectionGrpc.newBlockingStub(agent)
                                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(operator))
                                .withDeadlineAfter(60, TimeUnit.SECONDS)
                                .listNodes(ListNodesRequest.getDefaultInstance())
                                .getNodesList())
                        .isNotEmpty();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (!used.containsAll(awaited) && System.nanoTime() < deadline) {
                    record(used, server.takeRequest(200, TimeUnit.MILLISECONDS));
                }
            }
        } finally {
            if (agent != null) {
                agent.shutdownNow();
            }
        }
        for (RecordedRequest r; (r = server.takeRequest(200, TimeUnit.MILLISECONDS)) != null; ) {
            record(used, r);
        }

        // The writer Lease is the writer Role's, exactly.
        Set<ApiAccess> lease = new TreeSet<>();
        used.removeIf(a -> a.resource().equals("leases") && lease.add(a));
        assertThat(lease)
                .containsExactlyInAnyOrderElementsOf(
                        ApiAccess.grantedBy(DeployManifests.find(Role.class, "kube-verdict-control-plane-writer")));
        // Auto TLS's Secret and ConfigMap are the namespaced Role's (exactly: AutoTlsRbacTest).
        Set<ApiAccess> namespaced = new TreeSet<>();
        used.removeIf(a -> (a.resource().equals("secrets") || a.resource().equals("configmaps")) && namespaced.add(a));
        assertThat(namespaced).isNotEmpty();
        assertThat(ApiAccess.grantedBy(DeployManifests.find(Role.class, "kube-verdict-control-plane")))
                .containsAll(namespaced);
        ClusterRole role = DeployManifests.find(ClusterRole.class, "kube-verdict-control-plane");
        assertThat(used)
                .as("API permissions the control plane used")
                .containsExactlyInAnyOrderElementsOf(ApiAccess.grantedBy(role));
    }

    private static void record(Set<ApiAccess> used, RecordedRequest request) {
        if (request == null || !USER_AGENT.equals(request.getHeader("User-Agent"))) {
            return;
        }
        ApiAccess access = ApiAccess.ofRequest(request.getMethod(), request.getPath());
        if (access != null) {
            used.add(access);
        }
    }
}
