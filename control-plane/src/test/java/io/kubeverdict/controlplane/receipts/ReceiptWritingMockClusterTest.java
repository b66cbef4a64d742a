// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.ModelSerialization;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the control plane writes from its receipts, against fabric8's mock API server (CRUD): with
 * two replicas only the writer Lease's holder writes the Enforced condition, and the other takes
 * over when it goes; Events on a NetworkPolicy when it stalls and when it becomes enforced; the
 * readiness gate condition on a pod that lists it, once its node applied it.
 */
@MockKubernetes
@MockApiTest
class ReceiptWritingMockClusterTest {
    KubernetesMockServer server;
    KubernetesClient client;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private void cluster() {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(
                        new PodBuilder(Objects.pod("x", "a", Map.of("app", "a"), "n1", List.of("10.0.1.1"), List.of()))
                                .editSpec()
                                .addNewReadinessGate(PodReadinessGates.CONDITION)
                                .endSpec()
                                .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "b", Map.of("app", "b"), "n2", List.of("10.0.2.1"), List.of()))
                .create();
    }

    private KubernetesClient clientAs(String userAgent) {
        KubernetesClient c = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(client.getConfiguration())
                        .withUserAgent(userAgent)
                        .build())
                .build();
        open.add(c);
        return c;
    }

    private ControlPlane controlPlane(KubernetesClient as) throws Exception {
        ControlPlane cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(as, Duration.ZERO, Duration.ofMillis(100)));
        open.add(cp);
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        return cp;
    }

    private ReportingAgent agent(ControlPlane cp, String node) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
        open.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        ReportingAgent a = ReportingAgent.connect(channel, node);
        open.add(a);
        return a;
    }

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as(what).isNegative();
            Thread.sleep(50);
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> enforcedCondition() {
        GenericKubernetesResource anp = client.genericKubernetesResources(
                        AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .withName("ops")
                .get();
        if (anp.getAdditionalProperties().get("status") instanceof Map<?, ?> status
                && status.get("conditions") instanceof List<?> conditions) {
            for (Object c : conditions) {
                if (c instanceof Map<?, ?> m && "Enforced".equals(m.get("type"))) {
                    return (Map<String, Object>) m;
                }
            }
        }
        return Map.of();
    }

    /** Status writes received so far, by the writer's user agent (requests are taken off the server's queue). */
    private void countStatusWrites(Map<String, Integer> byAgent) throws InterruptedException {
        for (RecordedRequest r; (r = server.takeRequest(10, TimeUnit.MILLISECONDS)) != null; ) {
            if (r.getPath().endsWith("/status") && !"GET".equals(r.getMethod())) {
                byAgent.merge(String.valueOf(r.getHeader("User-Agent")), 1, Integer::sum);
            }
        }
    }

    @Test
    void onlyTheLeaseHolderWritesTheConditionAndTheOtherTakesOver() throws Exception {
        cluster();
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
        ControlPlane[] replicas = {controlPlane(clientAs("replica-0")), controlPlane(clientAs("replica-1"))};
        ReceiptWriting[] writing = new ReceiptWriting[2];
        for (int i = 0; i < 2; i++) {
            writing[i] = replicas[i].writeReceipts(
                    clientAs("replica-" + i),
                    new ReceiptWriting.Settings(
                            true,
                            false,
                            false,
                            new WriterLease.Settings(
                                    "kube-verdict",
                                    WriterLease.DEFAULT_NAME,
                                    "replica-" + i,
                                    Duration.ofSeconds(6),
                                    Duration.ofSeconds(4),
                                    Duration.ofMillis(500)),
                            Duration.ofSeconds(60)));
        }
        // Both nodes' agents report to both replicas: each alone could say "enforced on 2 of 2".
        Map<String, ReportingAgent> agents = new HashMap<>();
        for (int i = 0; i < 2; i++) {
            for (String node : List.of("n1", "n2")) {
                ReportingAgent a = agent(replicas[i], node);
                a.applyAll();
                agents.put(i + node, a);
            }
        }
        await("one replica holds the Lease", () -> writing[0].writer() || writing[1].writer());
        int holder = writing[0].writer() ? 0 : 1;
        assertThat(writing[1 - holder].writer()).as("only one writer").isFalse();
        await("the condition True", () -> "True".equals(enforcedCondition().get("status")));
        assertThat(enforcedCondition())
                .containsEntry("reason", "Enforced")
                .containsEntry("message", "enforced on 2 of 2 nodes");
        assertThat(((Number) enforcedCondition().get("observedGeneration")).longValue())
                .isEqualTo(generation);
        Map<String, Integer> writes = new HashMap<>();
        countStatusWrites(writes);
        assertThat(writes).as("status writes by user agent").containsOnlyKeys("replica-" + holder);

        // The holder goes (releasing the Lease); the other takes over and writes the next generation.
        replicas[holder].close();
        int next = 1 - holder;
        await("the other replica holds the Lease", () -> writing[next].writer());
        anp.getAdditionalProperties()
                .put("spec", HouseWorld.anp("""
                        metadata: {name: ops}
                        spec: {priority: 1, subject: {namespaces: {}}, ingress: [{action: Allow, from: [{namespaces: {}}]}]}
                        """).getAdditionalProperties().get("spec"));
        GenericKubernetesResource changed = client.genericKubernetesResources(
                        AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .withName("ops")
                .edit(o -> {
                    o.getAdditionalProperties()
                            .put("spec", anp.getAdditionalProperties().get("spec"));
                    return o;
                });
        long newGeneration = changed.getMetadata().getGeneration() == null
                ? 0
                : changed.getMetadata().getGeneration();
        for (String node : List.of("n1", "n2")) {
            ReportingAgent a = agents.get(next + node);
            a.awaitReceived(2);
            a.applyAll();
        }
        await(
                "the next generation's condition True",
                () -> "True".equals(enforcedCondition().get("status"))
                        && enforcedCondition().get("observedGeneration") instanceof Number g
                        && g.longValue() == newGeneration
                        && !writes.isEmpty());
        writes.clear();
        countStatusWrites(writes);
        assertThat(writes.keySet()).as("status writes after the handover").isSubsetOf(Set.of("replica-" + next));
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace("x").list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    @Test
    void eventsOnANetworkPolicyAndTheReadinessGate() throws Exception {
        cluster();
        // The client `serve` runs with: its informers read partial objects.
        KubernetesClient reading = ModelSerialization.client(client.getConfiguration());
        open.add(reading);
        ControlPlane cp = controlPlane(reading);
        cp.writeReceipts(reading, new ReceiptWriting.Settings(false, true, true, null, Duration.ofSeconds(2)));
        ReportingAgent n1 = agent(cp, "n1");
        Thread.sleep(1_500); // past the writer's first sweep: what was there before it is not news
        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .resource(Objects.policy("x", """
                        metadata: {name: deny-a}
                        spec: {podSelector: {matchLabels: {app: a}}, policyTypes: [Ingress]}
                        """))
                .create();
        n1.awaitReceived(2);
        Pod before = client.pods().inNamespace("x").withName("a").get();
        assertThat(condition(before)).as("not set before the node applied").isNull();

        await(
                "a PolicyNotEnforced event",
                () -> !events(EnforcementEvents.NOT_ENFORCED).isEmpty());
        Event stalled = events(EnforcementEvents.NOT_ENFORCED).get(0);
        assertThat(stalled.getType()).isEqualTo("Warning");
        assertThat(stalled.getInvolvedObject().getName()).isEqualTo("deny-a");
        assertThat(stalled.getMessage()).contains("enforced on 0 of 1 nodes").contains("n1");

        // The kubelet's condition, written while the gate waits, stays with the gate's.
        client.pods()
                .inNamespace("x")
                .withName("a")
                .editStatus(p -> new PodBuilder(p)
                        .editStatus()
                        .addNewCondition()
                        .withType("Ready")
                        .withStatus("False")
                        .withReason("ReadinessGatesNotReady")
                        .endCondition()
                        .endStatus()
                        .build());
        n1.applyAll();
        await(
                "a PolicyEnforced event",
                () -> !events(EnforcementEvents.ENFORCED).isEmpty());
        Event enforced = events(EnforcementEvents.ENFORCED).get(0);
        assertThat(enforced.getType()).isEqualTo("Normal");
        assertThat(enforced.getMessage()).startsWith("enforced on all 1 nodes");
        await(
                "the readiness gate's condition",
                () -> condition(client.pods().inNamespace("x").withName("a").get()) != null);
        Pod gated = client.pods().inNamespace("x").withName("a").get();
        assertThat(condition(gated).getStatus()).isEqualTo("True");
        assertThat(gated.getStatus().getConditions())
                .extracting(PodCondition::getType)
                .containsExactly("Ready", PodReadinessGates.CONDITION);
        assertThat(gated.getSpec()).isEqualTo(before.getSpec());
        assertThat(gated.getMetadata().getLabels())
                .isEqualTo(before.getMetadata().getLabels());
        assertThat(condition(client.pods().inNamespace("x").withName("b").get()))
                .as("a pod without the gate is left alone")
                .isNull();

        Thread.sleep(3_000); // three sweeps with nothing new
        assertThat(events(EnforcementEvents.ENFORCED))
                .as("one Event per change, not per sweep")
                .hasSize(1);
        assertThat(events(EnforcementEvents.NOT_ENFORCED)).hasSize(1);
    }

    private static PodCondition condition(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return null;
        }
        return pod.getStatus().getConditions().stream()
                .filter(c -> PodReadinessGates.CONDITION.equals(c.getType()))
                .findFirst()
                .orElse(null);
    }
}
