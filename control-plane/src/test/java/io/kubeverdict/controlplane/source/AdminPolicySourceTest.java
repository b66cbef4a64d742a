// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
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

    private static final String V1ALPHA1 = "/apis/" + AdminPolicyKind.GROUP + "/v1alpha1";

    private final List<String> served = new CopyOnWriteArrayList<>();
    /** "anp?" when a kind became unknown (discovery failing), "anp=" when known again. */
    private final List<String> unknown = new CopyOnWriteArrayList<>();

    private KubernetesSource source(RecordingSink sink) {
        return source(sink, Duration.ofMillis(300));
    }

    private KubernetesSource source(RecordingSink sink, Duration absenceGrace) {
        return source(client, sink, absenceGrace);
    }

    private KubernetesSource source(KubernetesClient client, RecordingSink sink, Duration absenceGrace) {
        return new KubernetesSource(
                client, sink, 0, Duration.ofMillis(100), absenceGrace, new AdminPolicyApis.Listener() {
                    @Override
                    public void served(AdminPolicyKind kind, boolean on) {
                        served.add(kind.shortName() + (on ? "+" : "-"));
                    }

                    @Override
                    public void unknown(AdminPolicyKind kind, boolean on) {
                        unknown.add(kind.shortName() + (on ? "?" : "="));
                    }
                });
    }

    /** Waits until the mock server has answered this many more GETs of {@code path} (requests are taken in order). */
    private void awaitRequests(String path, int count) throws InterruptedException {
        int seen = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (seen < count) {
            var request = server.takeRequest(1, TimeUnit.SECONDS);
            if (request != null && path.equals(request.getPath())) {
                seen++;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "timed out waiting for " + count + " requests of " + path + " (saw " + seen + ")");
            }
        }
    }

    private void create(GenericKubernetesResource p) {
        AdminPolicyKind kind = AdminPolicyKind.of(p.getApiVersion(), p.getKind());
        client.genericKubernetesResources(kind.apiVersion(), kind.kind())
                .resource(p)
                .create();
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
            // Reported served once its informer runs: its first objects may arrive before that report.
            await(() -> served.contains("anp+"), "the kind reported served");
            assertThat(sink.kinds).contains("adminnetworkpolicy/upsert");

            // Changed, added, removed.
            client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                    .withName("first")
                    .edit(o -> {
                        ((Map<String, Object>) o.getAdditionalProperties().get("spec")).put("priority", 20);
                        return o;
                    });
            await(() -> sink.log().stream().filter("anp+first"::equals).count() == 2, "the update");
            create(anp("second", 30));
            await(() -> sink.log().contains("anp+second"), "a second ANP");
            client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                    .withName("first")
                    .delete();
            await(() -> sink.log().contains("anp-first"), "the delete");

            // The CRD goes away: so do its objects.
            AdminPolicyCrds.uninstall(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
            await(() -> sink.log().contains("anp-second"), "objects of a removed CRD deleted");
            await(() -> served.get(served.size() - 1).equals("anp-"), "the kind reported gone");
            assertThat(sink.log())
                    .filteredOn(e -> e.startsWith("anp"))
                    .containsExactly("anp+first", "anp+first", "anp+second", "anp-first", "anp-second");
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
            client.nodes()
                    .withName("node-1")
                    .edit(n -> new NodeBuilder(n)
                            .editMetadata()
                            .addToLabels("role", "control-plane")
                            .endMetadata()
                            .build());
            await(() -> sink.log().stream().filter("node+node-1"::equals).count() == 2, "the node update");
            client.nodes().withName("node-1").delete();
            await(() -> sink.log().contains("node-node-1"), "the node delete");
            assertThat(sink.kinds).contains("node/upsert", "node/delete");
        }
    }

    /**
     * Audit M3: one discovery answer without the kind (a 404 from an API server that has not
     * loaded its CRDs, or a load balancer's wrong backend) is not the CRD going away. Before the
     * fix, the first 404 stopped the informer and deleted every ANP from the calculation.
     */
    @Test
    void discoveryAnswering404ForAWhileKeepsTheWatchedPolicies() throws Exception {
        AdminPolicyCrds.install(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
        create(anp("guard", 1));
        RecordingSink sink = new RecordingSink();
        try (KubernetesSource source = source(sink, Duration.ofHours(1))) {
            source.start().get(30, TimeUnit.SECONDS);
            assertThat(sink.log()).contains("anp+guard");
            server.takeRequest(0, TimeUnit.SECONDS); // (requests so far are not counted below)
            server.expect().get().withPath(V1ALPHA1).andReturn(404, "").times(3);

            // The three 404s, then at least two answers that serve the kind again.
            awaitRequests(V1ALPHA1, 5);
            assertThat(sink.log()).doesNotContain("anp-guard");
            assertThat(served).containsExactlyInAnyOrder("anp+", "banp-", "cnp-");

            // The informer still runs: changes keep arriving.
            create(anp("second", 2));
            await(() -> sink.log().contains("anp+second"), "an ANP created after the 404s");
        }
    }

    /**
     * Audit M3: a start while discovery fails publishes nothing without the admin tiers: the
     * initial state waits (the kind reported unknown) until discovery answers. Before the fix the
     * source reported synced after 10 failed attempts, without the ANPs.
     */
    @Test
    void failingDiscoveryAtStartHoldsTheInitialStateBackUntilItAnswers() throws Exception {
        AdminPolicyCrds.install(client, AdminPolicyKind.ADMIN_NETWORK_POLICY);
        create(anp("guard", 1));
        server.expect()
                .get()
                .withPath(V1ALPHA1)
                .andReturn(500, "etcd leader changed")
                .times(25);
        RecordingSink sink = new RecordingSink();
        // One request per discovery attempt (the client's own retries of a 500 would blur the count).
        try (KubernetesClient noRetries = new KubernetesClientBuilder()
                        .withConfig(new ConfigBuilder(client.getConfiguration())
                                .withRequestRetryBackoffLimit(0)
                                .build())
                        .build();
                KubernetesSource source = source(noRetries, sink, Duration.ofHours(1))) {
            var started = source.start();
            awaitRequests(V1ALPHA1, 15); // more failures than the old give-up (10)
            assertThat(started).isNotDone();
            assertThat(sink.synced).isEmpty();
            assertThat(unknown).contains("anp?", "banp?");

            started.get(60, TimeUnit.SECONDS);
            // Synced only with the ANP in.
            assertThat(sink.log()).contains("anp+guard");
            assertThat(served).contains("anp+").doesNotContain("anp-");
            // Each kind's "known" report may come just after the sync it let through.
            await(() -> unknown.containsAll(List.of("anp=", "banp=", "cnp=")), "every kind reported known");
        }
    }
}
