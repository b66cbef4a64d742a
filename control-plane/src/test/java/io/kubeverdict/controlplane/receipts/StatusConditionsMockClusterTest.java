// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Enforced condition on an AdminNetworkPolicy, through the status subresource of fabric8's
 * mock API server (CRUD): False while a node lags, True once both applied, with the object's
 * generation as observedGeneration, and not written again while nothing changes.
 */
@MockKubernetes
@MockApiTest
class StatusConditionsMockClusterTest {
    KubernetesMockServer server;
    KubernetesClient client;
    private ControlPlane cp;
    private ManagedChannel channel;

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> enforcedCondition() {
        GenericKubernetesResource anp = client.genericKubernetesResources(
                        AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .withName("ops")
                .get();
        if (!(anp.getAdditionalProperties().get("status") instanceof Map<?, ?> status)) {
            return Map.of();
        }
        if (!(status.get("conditions") instanceof List<?> conditions)) {
            return Map.of();
        }
        return conditions.stream()
                .map(c -> (Map<String, Object>) c)
                .filter(c -> "Enforced".equals(c.get("type")))
                .findFirst()
                .orElse(Map.of());
    }

    private Map<String, Object> awaitCondition(Predicate<Map<String, Object>> want) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Map<String, Object> c = enforcedCondition();
            if (want.test(c)) {
                return c;
            }
            assertThat(System.nanoTime() - end).as("condition now: " + c).isNegative();
            Thread.sleep(50);
        }
    }

    /** Status writes the mock server received so far (requests are taken off its queue). */
    private int statusWrites() throws InterruptedException {
        int n = 0;
        for (RecordedRequest r; (r = server.takeRequest(10, TimeUnit.MILLISECONDS)) != null; ) {
            if (r.getPath().endsWith("/adminnetworkpolicies/ops/status") && !"GET".equals(r.getMethod())) {
                n++;
            }
        }
        return n;
    }

    @Test
    void theConditionSaysWhereItIsEnforcedAndIsWrittenOnlyOnChange() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.1.1"), List.of()))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "b", Map.of(), "n2", List.of("10.0.2.1"), List.of()))
                .create();
        AdminPolicyCrds.installAll(client);
        GenericKubernetesResource anp = client.genericKubernetesResources(
                        AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .resource(HouseWorld.anp("""
                        metadata: {name: ops}
                        spec: {priority: 1, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                        """))
                .create();
        long generation = anp.getMetadata().getGeneration() == null
                ? 0
                : anp.getMetadata().getGeneration();
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO, Duration.ofMillis(100)));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        cp.writeReceipts(client, ReceiptWriting.Settings.conditionsOnly());
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
        try (ReportingAgent n1 = ReportingAgent.connect(channel, "n1");
                ReportingAgent n2 = ReportingAgent.connect(channel, "n2")) {
            Map<String, Object> lagging = awaitCondition(c -> "NodesLagging".equals(c.get("reason")));
            assertThat(lagging)
                    .containsEntry("status", "False")
                    .containsEntry("message", "enforced on 0 of 2 nodes")
                    .containsKey("lastTransitionTime");
            assertThat(((Number) lagging.get("observedGeneration")).longValue()).isEqualTo(generation);

            n1.apply(0);
            n2.apply(0);
            Map<String, Object> enforced = awaitCondition(c -> "True".equals(c.get("status")));
            assertThat(enforced)
                    .containsEntry("reason", "Enforced")
                    .containsEntry("message", "enforced on 2 of 2 nodes");
            assertThat(client.genericKubernetesResources(
                                    AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                            .withName("ops")
                            .get()
                            .getAdditionalProperties()
                            .get("spec"))
                    .as("the spec is untouched")
                    .isEqualTo(anp.getAdditionalProperties().get("spec"));

            statusWrites(); // drain what was recorded so far
            Thread.sleep(3_000); // three sweeps with nothing to change
            assertThat(statusWrites()).as("no write while nothing changes").isZero();
        }
    }
}
