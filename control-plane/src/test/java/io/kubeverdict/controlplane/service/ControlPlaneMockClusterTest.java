// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.testing.tier.MockApiTest;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The whole service against fabric8's mock API server (CRUD mode): informers -> event thread ->
 * snapshots -> a real gRPC client over a socket. The calculation is the service-test double (pods
 * become endpoints); what is checked is the plumbing: deltas after InSync, health, inspection,
 * metrics and Kubernetes Events for reported problems.
 */
@MockKubernetes
@MockApiTest
class ControlPlaneMockClusterTest {
    KubernetesMockServer server;
    KubernetesClient client;
    private ControlPlane cp;
    private ManagedChannel channel;

    static Pod pod(String ns, String name, String node, String ip, Map<String, String> labels) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .addNewContainer()
                .withName("c")
                .withImage("i")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(ip)
                .endStatus()
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

    private void startControlPlane(TestDoubleCalculator calc) throws Exception {
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        PolicySyncService.Options.defaults()),
                calc,
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO, Duration.ofMillis(100)));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
    }

    @Test
    void clusterChangesReachTheAgentAsDeltasAfterInSync() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "other", "n2", "10.0.0.9", Map.of()))
                .create();
        TestDoubleCalculator calc = new TestDoubleCalculator();
        startControlPlane(calc);
        cp.firstCalculation().get(30, TimeUnit.SECONDS);
        assertThat(HealthGrpc.newBlockingStub(channel)
                        .check(HealthCheckRequest.getDefaultInstance())
                        .getStatus())
                .isEqualTo(ServingStatus.SERVING);

        try (TestAgent agent = TestAgent.connect(channel, "n1", true)) {
            agent.readUntilInSync();
            assertThat(agent.state("n1").getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("a");

            // Create, relabel, delete: each shows up as exactly the delta it implies.
            client.pods()
                    .inNamespace("x")
                    .resource(pod("x", "b", "n1", "10.0.0.2", Map.of("app", "b")))
                    .create();
            ToAgent add = agent.nextDelta();
            assertThat(add.getPayloadCase()).isEqualTo(PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
            assertThat(add.getWorkloadEndpointUpdate().getId().getPod()).isEqualTo("b");
            assertThat(add.getEventTimeUnixNanos()).isPositive();

            client.pods()
                    .inNamespace("x")
                    .withName("a")
                    .edit(p -> new PodBuilder(p)
                            .editMetadata()
                            .addToLabels("app", "a2")
                            .endMetadata()
                            .build());
            ToAgent relabel = agent.nextDelta();
            assertThat(relabel.getWorkloadEndpointUpdate().getEndpoint().getLabelsMap())
                    .containsEntry("app", "a2");

            client.pods().inNamespace("x").withName("b").delete();
            ToAgent remove = agent.nextDelta();
            assertThat(remove.getPayloadCase()).isEqualTo(PayloadCase.WORKLOAD_ENDPOINT_REMOVE);
            assertThat(remove.getWorkloadEndpointRemove().getId().getPod()).isEqualTo("b");

            // A change on another node sends nothing here; the next local change is the next message.
            client.pods().inNamespace("x").withName("other").delete();
            client.pods()
                    .inNamespace("x")
                    .resource(pod("x", "c", "n1", "10.0.0.3", Map.of()))
                    .create();
            assertThat(agent.nextDelta().getWorkloadEndpointUpdate().getId().getPod())
                    .isEqualTo("c");
            assertThat(agent.deltas()).noneMatch(m -> m.getPayloadCase() == PayloadCase.IN_SYNC);
        }
        // Every change was applied on one thread.
        assertThat(calc.threads).containsExactly("calculation");

        // Inspection sees the same state.
        NodeSnapshot n1 = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                .getSnapshot(GetSnapshotRequest.newBuilder().setNode("n1").build());
        assertThat(n1.getEndpointsList()).extracting(e -> e.getId().getPod()).containsExactlyInAnyOrder("a", "c");
        assertThat(ControlPlaneInspectionGrpc.newBlockingStub(channel)
                        .listNodes(ListNodesRequest.getDefaultInstance())
                        .getNodesList())
                .extracting(s -> s.getNode())
                .contains("n1", "n2");

        assertThat(get("/readyz")).isEqualTo("ok\n");
        assertThat(get("/healthz")).isEqualTo("ok\n");
        String metrics = scrape();
        assertThat(metrics)
                .contains("kubeverdict_events_processed_total{kind=\"pod/upsert\"}")
                .contains("kubeverdict_sync_messages_sent_total")
                .contains("kubeverdict_calculation_seconds_count")
                .contains("jvm_memory_used_bytes")
                .contains("kubeverdict_build_info{component=\"control-plane\",version=\"" + BuildVersion.current()
                        + "\"} 1")
                // informer health: every informer listed; the watches are open
                .contains("kubeverdict_informer_synced{resource=\"pod\"} 1.0")
                .contains("kubeverdict_informer_synced{resource=\"networkpolicy\"} 1.0")
                .contains("kubeverdict_informer_watching{resource=\"namespace\"}");
    }

    @Test
    void reportedPolicyProblemsBecomeKubernetesEvents() throws Exception {
        startControlPlane(new TestDoubleCalculator());
        cp.firstCalculation().get(30, TimeUnit.SECONDS);
        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .resource(new NetworkPolicyBuilder()
                        .withNewMetadata()
                        .withNamespace("x")
                        .withName("bad")
                        .endMetadata()
                        .withNewSpec()
                        .withNewPodSelector()
                        .endPodSelector()
                        .endSpec()
                        .build())
                .create();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (client.v1().events().inNamespace("x").list().getItems().isEmpty()) {
            assertThat(System.nanoTime()).as("event posted").isLessThan(deadline);
            Thread.sleep(50);
        }
        var e = client.v1().events().inNamespace("x").list().getItems().get(0);
        assertThat(e.getInvolvedObject().getName()).isEqualTo("bad");
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("NetworkPolicy");
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getMessage()).contains("test problem");
        assertThat(scrape()).contains("kubeverdict_policy_problems 1.0");
    }

    @Test
    void problemsOfClusterScopedPoliciesBecomeEventsInDefaultAndServedApisAreExported() throws Exception {
        startControlPlane(new TestDoubleCalculator());
        cp.firstCalculation().get(30, TimeUnit.SECONDS);
        assertThat(scrape())
                .contains("kubeverdict_policy_api_served{api_version=\"policy.networking.k8s.io/v1alpha1\","
                        + "kind=\"AdminNetworkPolicy\"} 0.0");
        AdminPolicyCrds.install(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
        client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .resource(HouseWorld.anp("""
                        metadata: {name: bad}
                        spec: {priority: 1, subject: {namespaces: {}}}
                        """))
                .create();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (client.v1().events().inNamespace("default").list().getItems().isEmpty()) {
            assertThat(System.nanoTime()).as("event posted").isLessThan(deadline);
            Thread.sleep(50);
        }
        var e = client.v1().events().inNamespace("default").list().getItems().get(0);
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("AdminNetworkPolicy");
        assertThat(e.getInvolvedObject().getApiVersion()).isEqualTo("policy.networking.k8s.io/v1alpha1");
        assertThat(e.getInvolvedObject().getName()).isEqualTo("bad");
        assertThat(e.getInvolvedObject().getNamespace()).isNull();
        assertThat(e.getReason()).isEqualTo("UnusablePolicy");
        assertThat(scrape())
                .contains("kubeverdict_policy_api_served{api_version=\"policy.networking.k8s.io/v1alpha1\","
                        + "kind=\"AdminNetworkPolicy\"} 1.0")
                .contains("kubeverdict_policy_api_served{api_version=\"policy.networking.k8s.io/v1alpha2\","
                        + "kind=\"ClusterNetworkPolicy\"} 0.0")
                .contains("kubeverdict_events_processed_total{kind=\"adminnetworkpolicy/upsert\"}");
    }

    private String scrape() throws Exception {
        return get("/metrics");
    }

    private String get(String path) throws Exception {
        try (InputStream in = URI.create("http://127.0.0.1:" + cp.metricsPort() + path)
                .toURL()
                .openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
