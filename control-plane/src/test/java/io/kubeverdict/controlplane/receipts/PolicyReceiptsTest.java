// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PolicyReceiptsTest {
    private static final PolicyRef DENY = PolicyRef.networkPolicy("x", "deny-all");
    private static final PolicyRef OTHER = PolicyRef.networkPolicy("x", "other");

    private final List<Long> latencies = new ArrayList<>();
    private final PolicyReceipts receipts = new PolicyReceipts(latencies::add);

    private static List<ActivePolicy> list(PolicyRef... refs) {
        List<ActivePolicy> out = new ArrayList<>();
        for (PolicyRef r : refs) {
            out.add(ActivePolicy.newBuilder()
                    .setId(PolicyId.newBuilder().setTier("default").setName(r.namespace() + "/" + r.name()))
                    .build());
        }
        return out;
    }

    private Receipt receipt(PolicyRef ref) {
        return receipts.receipt(ref, 100).orElseThrow();
    }

    @Test
    void enforcedOnceEveryNodeAppliedAVersionThatHoldsTheGeneration() {
        receipts.written(DENY, 1, "10", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_100);
        receipts.nodePublished("b", 6, list(DENY), 1_100);
        receipts.nodePublished("c", 7, list(), 1_100); // a node the policy does not apply to
        Receipt before = receipt(DENY);
        assertThat(before.calculated()).isFalse();
        assertThat(before.enforced()).isFalse();
        assertThat(before.nodes()).isEqualTo(2);
        assertThat(before.enforcedNodes()).isZero();

        receipts.publicationDone(1_200);
        receipts.applied("a", 5, 2_000);
        receipts.applied("c", 7, 2_100);
        Receipt half = receipt(DENY);
        assertThat(half.calculated()).isTrue();
        assertThat(half.enforcedNodes()).isEqualTo(1);
        assertThat(half.laggingNodes()).isEqualTo(1);
        assertThat(half.nodeReceipts().get(0)).isEqualTo(new Receipt.NodeReceipt("b", false, 6, 0, 1_000));
        assertThat(half.nodeReceipts().get(1).node()).isEqualTo("a");
        assertThat(half.enforced()).isFalse();
        assertThat(latencies).isEmpty();

        receipts.applied("b", 4, 2_500); // older than what holds the generation
        assertThat(receipt(DENY).enforced()).isFalse();
        receipts.applied("b", 9, 3_000);
        Receipt done = receipt(DENY);
        assertThat(done.enforced()).isTrue();
        assertThat(done.enforcedNodes()).isEqualTo(2);
        assertThat(done.enforcedSinceUnixNanos()).isEqualTo(3_000);
        assertThat(done.latencyNanos()).isEqualTo(2_000);
        assertThat(latencies).containsExactly(2_000L);
    }

    @Test
    void aNewGenerationIsRequiredAtTheVersionsPublishedAfterItAndTheOldAcksDoNotCount() {
        receipts.written(DENY, 1, "10", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_500);
        assertThat(receipt(DENY).enforced()).isTrue();

        receipts.written(DENY, 2, "11", 2_000);
        assertThat(receipt(DENY).enforced()).isFalse();
        assertThat(receipt(DENY).generation()).isEqualTo(2);
        receipts.nodePublished("a", 8, list(DENY), 2_000); // a new list instance, same policies
        receipts.publicationDone(2_000);
        assertThat(receipt(DENY).enforced()).isFalse();
        assertThat(receipt(DENY).nodeReceipts().get(0).requiredVersion()).isEqualTo(8);
        receipts.applied("a", 8, 2_700);
        assertThat(receipt(DENY).enforced()).isTrue();
        assertThat(receipt(DENY).latencyNanos()).isEqualTo(700);
        assertThat(latencies).containsExactly(500L, 700L);
    }

    @Test
    void aWriteThatChangesNoSnapshotIsEnforcedWhereTheCurrentVersionIsApplied() {
        receipts.written(DENY, 1, "10", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_500);
        receipts.written(DENY, 2, "11", 2_000); // a change the calculation compiles to the same policy
        receipts.publicationDone(2_001);
        assertThat(receipt(DENY).enforced()).isTrue();
        assertThat(receipt(DENY).enforcedSinceUnixNanos()).isEqualTo(2_001);
    }

    @Test
    void theSameGenerationAgainIsNoNewWrite() {
        receipts.written(DENY, 3, "10", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_500);
        receipts.written(DENY, 3, "12", 9_000); // a label change, a resync
        assertThat(receipt(DENY).enforced()).isTrue();
        assertThat(receipt(DENY).writtenUnixNanos()).isEqualTo(1_000);
    }

    @Test
    void withoutGenerationsEveryWriteWithAnotherResourceVersionIsNew() {
        receipts.written(DENY, 0, "", 1_000);
        receipts.publicationDone(1_000);
        assertThat(receipt(DENY).enforced()).isTrue(); // applies to no node
        receipts.written(DENY, 0, "", 2_000); // a manifest reload that changed it
        assertThat(receipt(DENY).enforced()).isFalse();
        receipts.written(DENY, 0, "7", 3_000);
        receipts.publicationDone(3_000);
        receipts.written(DENY, 0, "7", 4_000);
        assertThat(receipt(DENY).enforced()).isTrue();
    }

    @Test
    void aPolicyOnNoNodeIsEnforcedOnceCalculatedAndAddsNoLatencySample() {
        receipts.written(DENY, 1, "1", 1_000);
        assertThat(receipt(DENY).enforced()).isFalse();
        receipts.publicationDone(1_500);
        Receipt r = receipt(DENY);
        assertThat(r.enforced()).isTrue();
        assertThat(r.nodes()).isZero();
        assertThat(r.latencyNanos()).isEqualTo(500);
        assertThat(latencies).isEmpty();
    }

    @Test
    void aNodeThatNeverAcksKeepsItLaggingAndIsNamed() {
        receipts.written(DENY, 1, "1", 1_000);
        for (String node : List.of("a", "b", "c")) {
            receipts.nodePublished(node, 5, list(DENY), 1_000);
        }
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_100);
        receipts.applied("c", 5, 1_100);
        Receipt r = receipt(DENY);
        assertThat(r.enforcedNodes()).isEqualTo(2);
        assertThat(r.nodes()).isEqualTo(3);
        assertThat(r.nodeReceipts().get(0).node()).isEqualTo("b");
        assertThat(receipts.notEnforcedFor(10_000, 5_000)).isZero();
        assertThat(receipts.notEnforcedFor(10_000, 12_000)).isEqualTo(1);
        assertThat(receipts.receipt(DENY, 1).orElseThrow().nodeReceipts())
                .extracting(Receipt.NodeReceipt::node)
                .containsExactly("b");
    }

    @Test
    void aNodeTheNewPolicyReachesLaterMustApplyItTooAndOneItLeavesNoLonger() {
        receipts.written(DENY, 1, "1", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_100);
        assertThat(receipt(DENY).enforced()).isTrue();

        receipts.nodePublished("b", 9, list(DENY, OTHER), 2_000); // a selected pod started on b
        receipts.publicationDone(2_000);
        Receipt r = receipt(DENY);
        assertThat(r.enforced()).isFalse();
        assertThat(r.nodeReceipts().get(0)).isEqualTo(new Receipt.NodeReceipt("b", false, 9, 0, 2_000));
        assertThat(r.latencyNanos()).isEqualTo(100); // the generation's latency stays the first one

        receipts.nodePublished("b", 10, list(OTHER), 3_000); // and went away again
        assertThat(receipt(DENY).enforced()).isTrue();
        assertThat(receipt(DENY).nodes()).isEqualTo(1);
    }

    @Test
    void aDeletedPolicysReceiptDisappearsAndOneWrittenAgainInTheSameBurstKeepsItsNodes() {
        receipts.written(DENY, 1, "1", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.deleted(DENY);
        assertThat(receipts.receipt(DENY, 10)).isEmpty();
        assertThat(receipts.all(10)).isEmpty();

        receipts.written(DENY, 1, "3", 2_000); // recreated before the node's snapshot was published again
        receipts.publicationDone(2_000); // and the node's snapshot did not change
        Receipt r = receipt(DENY);
        assertThat(r.nodes()).isEqualTo(1);
        assertThat(r.nodeReceipts().get(0).requiredVersion()).isEqualTo(5);
        assertThat(r.enforced()).isFalse();
        receipts.applied("a", 5, 2_500);
        assertThat(receipt(DENY).enforced()).isTrue();
    }

    @Test
    void anAgentThatReconnectsKeepsWhatItApplied() {
        receipts.written(DENY, 1, "1", 1_000);
        receipts.nodePublished("a", 5, list(DENY), 1_000);
        receipts.publicationDone(1_000);
        receipts.applied("a", 5, 1_100);
        receipts.applied("a", 2, 1_200); // a report on a new stream cannot take it back
        assertThat(receipt(DENY).enforced()).isTrue();
    }

    @Test
    void adminTierPoliciesAreNamedByTheirKind() {
        assertThat(PolicyRef.of(
                        PolicyId.newBuilder().setTier("admin").setName("ops").build()))
                .isEqualTo(PolicyRef.admin(AdminPolicyKind.ADMIN_NETWORK_POLICY, "ops"));
        assertThat(PolicyRef.of(PolicyId.newBuilder()
                        .setTier("baseline")
                        .setName("default")
                        .build()))
                .isEqualTo(PolicyRef.admin(AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY, "default"));
        assertThat(PolicyRef.of(PolicyId.newBuilder()
                        .setTier("baseline")
                        .setName("cnp:b")
                        .build()))
                .isEqualTo(PolicyRef.admin(AdminPolicyKind.CLUSTER_NETWORK_POLICY, "b"));
        assertThat(PolicyRef.of(
                        PolicyId.newBuilder().setTier("admin").setName("cnp:a").build()))
                .isEqualTo(PolicyRef.admin(AdminPolicyKind.CLUSTER_NETWORK_POLICY, "a"));
        assertThat(PolicyRef.parse("netpol/x/deny-all")).isEqualTo(DENY);
        assertThat(PolicyRef.parse("NetworkPolicy/x/deny-all").toString()).isEqualTo("networkpolicy/x/deny-all");
        assertThat(PolicyRef.parse("anp/ops").toString()).isEqualTo("adminnetworkpolicy/ops");
        assertThat(PolicyRef.parse("clusternetworkpolicies/c").toString()).isEqualTo("clusternetworkpolicy/c");
        assertThatThrownBy(() -> PolicyRef.parse("networkpolicy/deny-all")).hasMessageContaining("NAMESPACE/NAME");
        assertThatThrownBy(() -> PolicyRef.parse("anp/x/y")).hasMessageContaining("cluster-scoped");
        assertThatThrownBy(() -> PolicyRef.parse("pod/x/y")).hasMessageContaining("unknown kind");
    }

    /** The nodes a policy applies to are the ones whose snapshot the real calculation gives it. */
    @Test
    void theRealCalculationNamesTheNodesOfTheSelectedPods() {
        AtomicLong clock = new AtomicLong(1_000);
        ReceiptingCalculator calc = new ReceiptingCalculator(new IncrementalPolicyCalculator(), receipts, clock::get);
        calc.upsertNamespace(Objects.namespace("x", Map.of()));
        calc.upsertPod(Objects.pod("x", "web-1", Map.of("app", "web"), "n1", List.of("10.0.1.1"), List.of()));
        calc.upsertPod(Objects.pod("x", "web-2", Map.of("app", "web"), "n2", List.of("10.0.2.1"), List.of()));
        calc.upsertPod(Objects.pod("x", "db", Map.of("app", "db"), "n3", List.of("10.0.3.1"), List.of()));
        var policy = Objects.policy("x", """
                metadata:
                  name: deny-all
                  generation: 4
                  resourceVersion: "77"
                spec:
                  podSelector:
                    matchLabels: {app: web}
                """);
        calc.upsertPolicy(policy);
        long[] version = {0};
        Runnable publish = () -> {
            for (String node : calc.drainChangedNodes()) {
                receipts.nodePublished(node, ++version[0], calc.snapshot(node).getPoliciesList(), clock.get());
            }
            receipts.publicationDone(clock.get());
        };
        publish.run();
        Receipt r = receipt(DENY);
        assertThat(r.generation()).isEqualTo(4);
        assertThat(r.resourceVersion()).isEqualTo("77");
        assertThat(r.nodeReceipts()).extracting(Receipt.NodeReceipt::node).containsExactlyInAnyOrder("n1", "n2");

        calc.deletePolicy("x", "deny-all");
        publish.run();
        assertThat(receipts.receipt(DENY, 10)).isEmpty();
        assertThat(receipts.all(10)).isEmpty();
        assertThat(Set.copyOf(calc.nodes())).containsExactlyInAnyOrder("n1", "n2", "n3");
    }

    /** A staged policy is enforced nowhere: no receipt says it is, and staging a live one takes its receipt away. */
    @Test
    void aStagedPolicyHasNoReceipt() {
        AtomicLong clock = new AtomicLong(1_000);
        ReceiptingCalculator calc = new ReceiptingCalculator(new IncrementalPolicyCalculator(), receipts, clock::get);
        calc.upsertNamespace(Objects.namespace("x", Map.of()));
        calc.upsertPod(Objects.pod("x", "web-1", Map.of("app", "web"), "n1", List.of("10.0.1.1"), List.of()));
        String spec = """
                spec:
                  podSelector:
                    matchLabels: {app: web}
                """;
        Runnable publish = () -> {
            for (String node : calc.drainChangedNodes()) {
                receipts.nodePublished(
                        node, clock.incrementAndGet(), calc.snapshot(node).getPoliciesList(), clock.get());
            }
            receipts.publicationDone(clock.get());
        };
        calc.upsertPolicy(Objects.policy("x", """
                metadata:
                  name: deny-all
                  generation: 1
                  annotations: {kube-verdict.io/staged: "true"}
                """ + spec));
        publish.run();
        assertThat(receipts.receipt(DENY, 10)).isEmpty();

        calc.upsertPolicy(Objects.policy("x", """
                metadata:
                  name: deny-all
                  generation: 2
                """ + spec));
        publish.run();
        assertThat(receipts.receipt(DENY, 10)).isPresent();

        calc.upsertPolicy(Objects.policy("x", """
                metadata:
                  name: deny-all
                  generation: 3
                  annotations: {kube-verdict.io/staged: "true"}
                """ + spec));
        publish.run();
        assertThat(receipts.receipt(DENY, 10))
                .as("staged again: enforced nowhere")
                .isEmpty();
    }
}
