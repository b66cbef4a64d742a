package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.testing.tier.MockApiTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The admin-tier policy kinds and Nodes through the Kubernetes source, against fabric8's mock API
 * server (CRUD): a CRD that is missing is not an error and is picked up when it is installed;
 * objects are added, changed and removed; a CRD that goes away takes its objects with it.
 */
@MockKubernetes
@MockApiTest
class AdminPolicySourceTest {
    KubernetesMockServer server;
    KubernetesClient client;

    private final List<String> served = new CopyOnWriteArrayList<>();

    private KubernetesSource source(RecordingSink sink) {
        return new KubernetesSource(client, sink, 0, Duration.ofMillis(100),
                (kind, on) -> served.add(kind.shortName() + (on ? "+" : "-")));
    }

    private void create(GenericKubernetesResource p) {
        AdminPolicyKind kind = AdminPolicyKind.of(p.getApiVersion(), p.getKind());
        client.genericKubernetesResources(kind.apiVersion(), kind.kind()).resource(p).create();
    }

    private static GenericKubernetesResource anp(String name, int priority) {
        return HouseWorld.anp("""
                metadata: {name: %s}
                spec: {priority: %d, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                """.formatted(name, priority));
    }

    @Test
    void missingCrdsAreNotAnErrorAndAreWatchedOnceInstalled() throws Exception {
        RecordingSink sink = new RecordingSink();
        try (KubernetesSource source = source(sink)) {
            source.start().get(30, TimeUnit.SECONDS);
            assertThat(sink.synced).containsExactly("kubernetes");
            assertThat(served).containsExactlyInAnyOrder("anp-", "banp-", "cnp-");

            // Installed late: watched from then on; its objects arrive as ordinary adds.
            AdminPolicyCrds.install(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
            create(anp("first", 10));
            await(() -> sink.log().contains("anp+first"), "the ANP after its CRD appeared");
            assertThat(served).contains("anp+");
            assertThat(sink.kinds).contains("adminnetworkpolicy/upsert");

            // Changed, added, removed.
            client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                    .withName("first").edit(o -> {
                        ((Map<String, Object>) o.getAdditionalProperties().get("spec")).put("priority", 20);
                        return o;
                    });
            await(() -> sink.log().stream().filter("anp+first"::equals).count() == 2, "the update");
            create(anp("second", 30));
            await(() -> sink.log().contains("anp+second"), "a second ANP");
            client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                    .withName("first").delete();
            await(() -> sink.log().contains("anp-first"), "the delete");

            // The CRD goes away: so do its objects.
            AdminPolicyCrds.uninstall(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
            await(() -> sink.log().contains("anp-second"), "objects of a removed CRD deleted");
            assertThat(served).endsWith("anp-");
            assertThat(sink.log()).filteredOn(e -> e.startsWith("anp")).containsExactly(
                    "anp+first", "anp+first", "anp+second", "anp-first", "anp-second");
        }
    }

    @Test
    void installedCrdsAreListedBeforeTheSourceReportsSynced() throws Exception {
        AdminPolicyCrds.installAll(client);
        create(anp("guard", 1));
        create(HouseWorld.banp("""
                metadata: {name: default}
                spec: {subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
                """));
        create(HouseWorld.cnp("""
                metadata: {name: v2}
                spec: {tier: Baseline, priority: 3, subject: {namespaces: {}}, egress: [{action: Pass, to: [{nodes: {}}]}]}
                """));
        client.nodes().resource(HouseWorld.nodes().get(0)).create();
        RecordingSink sink = new RecordingSink();
        try (KubernetesSource source = source(sink)) {
            source.start().get(30, TimeUnit.SECONDS);
            // Everything listed is in before the sync marker.
            assertThat(sink.log()).contains("anp+guard", "banp+default", "cnp+v2", "node+node-1");
            assertThat(served).containsExactlyInAnyOrder("anp+", "banp+", "cnp+");

            // Node changes flow through: relabel, then delete.
            client.nodes().withName("node-1").edit(n -> new NodeBuilder(n).editMetadata()
                    .addToLabels("role", "control-plane").endMetadata().build());
            await(() -> sink.log().stream().filter("node+node-1"::equals).count() == 2, "the node update");
            client.nodes().withName("node-1").delete();
            await(() -> sink.log().contains("node-node-1"), "the node delete");
            assertThat(sink.kinds).contains("node/upsert", "node/delete");
        }
    }
}
