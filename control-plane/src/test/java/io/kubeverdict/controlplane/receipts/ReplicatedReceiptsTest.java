// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Two replicas' bookkeeping side by side (each agent reports to one of them): what one answers
 * for the whole cluster with the other's statement merged in.
 */
class ReplicatedReceiptsTest {
    private static final PolicyRef DENY = PolicyRef.networkPolicy("x", "deny-all");

    private final PolicyReceipts a = new PolicyReceipts();
    private final PolicyReceipts b = new PolicyReceipts();
    private final ReplicatedReceipts readA = new ReplicatedReceipts(a, () -> Set.of("n1"));
    private final ReplicatedReceipts readB = new ReplicatedReceipts(b, () -> Set.of("n2"));

    private static List<ActivePolicy> list(PolicyRef ref) {
        return List.of(ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier("default").setName(ref.namespace() + "/" + ref.name()))
                .build());
    }

    /** Both replicas calculate the write onto these nodes (their versions differ: they count apart). */
    private static void write(PolicyReceipts r, String resourceVersion, long version, long at, String... nodes) {
        write(r, 0, resourceVersion, version, at, nodes);
    }

    private static void write(
            PolicyReceipts r, long generation, String resourceVersion, long version, long at, String... nodes) {
        r.written(DENY, generation, resourceVersion, at);
        for (String n : nodes) {
            r.nodePublished(n, version, list(DENY), at);
        }
        r.publicationDone(at);
    }

    private PeerReceipts askingB() {
        return (named, maxLagging) ->
                new PeerAnswers(List.of(PeerAnswers.Answer.of(readB.localStatements(named, maxLagging))), true);
    }

    private Receipt fromA() {
        return readA.named(List.of(DENY), 100).receipts().get(0);
    }

    @Test
    void aPeersNodeCountsOnceItsReplicaSaysItRunsTheGeneration() {
        write(a, "10", 5, 1_000, "n1", "n2");
        write(b, "10", 70, 1_100, "n1", "n2");
        a.applied("n1", 5, 2_000);
        // Alone, replica A knows nothing of n2 (its agent reports to B).
        assertThat(fromA().enforced()).isFalse();
        readA.askPeers("a", askingB());
        readB.askPeers("b", PeerReceipts.ALONE);

        Receipt half = fromA();
        assertThat(half.enforcedNodes()).isEqualTo(1);
        assertThat(half.nodeReceipts().get(0).node()).isEqualTo("n2");
        assertThat(half.nodeReceipts().get(0).enforced()).isFalse();

        b.applied("n2", 70, 3_000);
        Receipt done = fromA();
        assertThat(done.enforced()).isTrue();
        assertThat(done.enforcedNodes()).isEqualTo(2);
        assertThat(done.enforcedSinceUnixNanos()).isEqualTo(3_000); // when the last node, on B, came to it
        assertThat(done.latencyNanos()).isEqualTo(2_000);
    }

    @Test
    void aPeerAtAnotherGenerationOrWithOtherNodesDoesNotCount() {
        write(a, "11", 5, 1_000, "n1", "n2");
        write(b, "10", 70, 1_000, "n1", "n2"); // B has not seen the newest write yet
        a.applied("n1", 5, 2_000);
        b.applied("n2", 70, 2_000);
        readA.askPeers("a", askingB());
        assertThat(fromA().enforced()).as("B's n2 runs an older generation").isFalse();

        write(b, "11", 71, 2_500, "n1"); // B now calculates the policy onto n1 only
        b.nodePublished("n2", 72, List.of(), 2_500);
        b.applied("n2", 72, 3_000);
        Receipt r = fromA();
        assertThat(r.enforced())
                .as("B's node set differs from A's: not counted")
                .isFalse();
        assertThat(r.nodeReceipts().get(0).node()).isEqualTo("n2");
    }

    @Test
    void aStatusWriteSeenByOneReplicaOnlyChangesNothing() {
        write(a, 3, "10", 5, 1_000, "n1", "n2");
        write(b, 3, "10", 70, 1_000, "n1", "n2");
        a.applied("n1", 5, 2_000);
        b.applied("n2", 70, 2_000);
        readA.askPeers("a", askingB());
        assertThat(fromA().enforced()).isTrue();
        // The writer's condition moves the resourceVersion, not the generation; A sees it first.
        a.written(DENY, 3, "11", 2_500);
        assertThat(fromA().enforced()).isTrue();
        // A new generation B has not seen yet: B's node does not count.
        write(a, 4, "12", 6, 3_000, "n1", "n2");
        a.applied("n1", 6, 3_100);
        assertThat(fromA().enforced()).isFalse();
        write(b, 4, "12", 71, 3_000, "n1", "n2");
        b.applied("n2", 71, 3_200);
        assertThat(fromA().enforced()).isTrue();
    }

    @Test
    void aNodeOfAPeerThatDidNotAnswerIsUnknownNotEnforced() {
        write(a, "10", 5, 1_000, "n1", "n2");
        a.applied("n1", 5, 2_000);
        readA.askPeers("a", (named, maxLagging) -> new PeerAnswers(List.of(), false));
        ReplicatedReceipts.Look look = readA.all(0);
        assertThat(look.receipts().get(0).enforced()).isFalse();
        assertThat(look.unknown(look.receipts().get(0))).isEqualTo(1);
        // With every peer heard from, a node reporting to none is simply lagging.
        readA.askPeers("a", (named, maxLagging) -> new PeerAnswers(List.of(), true));
        look = readA.all(0);
        assertThat(look.unknown(look.receipts().get(0))).isZero();
    }

    @Test
    void lagCountsStayExactWhenAPeerNamesOnlySomeLaggingNodes() {
        write(a, "10", 5, 1_000, "n1", "n2", "n3", "n4");
        write(b, "10", 70, 1_000, "n1", "n2", "n3", "n4");
        ReplicatedReceipts readB3 = new ReplicatedReceipts(b, () -> Set.of("n2", "n3", "n4"));
        b.applied("n4", 70, 2_000);
        readA.askPeers(
                "a",
                (named, maxLagging) ->
                        new PeerAnswers(List.of(PeerAnswers.Answer.of(readB3.localStatements(named, 1))), true));
        Receipt r = fromA();
        assertThat(r.laggingNodes()).as("n1 (here, not applied), n2 and n3 (B)").isEqualTo(3);
        assertThat(r.enforcedNodes()).isEqualTo(1);
        Receipt counted = readA.all(0).receipts().get(0); // counts only, no node entries (the writers')
        assertThat(counted.nodeReceipts()).isEmpty();
        assertThat(counted.laggingNodes()).isEqualTo(3);
        assertThat(counted.enforcedNodes()).isEqualTo(1);
    }
}
