// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SnapshotDiffTest {
    private final SnapshotDiff diff = new SnapshotDiff(1 << 20);

    private static IndexedSnapshot idx(NodeSnapshot s) {
        return IndexedSnapshot.of(s, 1, 0);
    }

    private static final NodeSnapshot FULL = snapshot(
            "n1",
            List.of(ipSet("s1", "10.0.0.1", "10.0.0.2"), ipSet("s2", "10.0.1.1")),
            List.of(allowIngressFrom("x/allow-a", "s1"), allowIngressFrom("x/allow-b", "s2")),
            List.of(podEndpoint("x", "a", "10.0.0.1", "x/allow-a"), podEndpoint("x", "b", "10.0.0.2", "x/allow-b")));

    /** The diff's messages (payloads shared between streams unwrapped). */
    private static List<ToAgent> messages(SnapshotDiff differ, IndexedSnapshot from, IndexedSnapshot to) {
        return differ.diff(from, to).stream().map(Payload::message).toList();
    }

    private static List<PayloadCase> kinds(List<ToAgent> msgs) {
        return msgs.stream().map(ToAgent::getPayloadCase).toList();
    }

    @Test
    void fullSnapshotAddsSetsThenPoliciesThenEndpoints() {
        List<ToAgent> msgs = messages(diff, IndexedSnapshot.empty("n1"), idx(FULL));
        assertThat(kinds(msgs))
                .containsExactly(
                        PayloadCase.IP_SET_UPDATE, PayloadCase.IP_SET_UPDATE,
                        PayloadCase.ACTIVE_POLICY_UPDATE, PayloadCase.ACTIVE_POLICY_UPDATE,
                        PayloadCase.WORKLOAD_ENDPOINT_UPDATE, PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
        AgentView v = new AgentView();
        msgs.forEach(v::apply);
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(FULL));
    }

    @Test
    void emptyingRemovesEndpointsThenPoliciesThenSets() {
        List<ToAgent> msgs = messages(diff, idx(FULL), IndexedSnapshot.empty("n1"));
        assertThat(kinds(msgs))
                .containsExactly(
                        PayloadCase.WORKLOAD_ENDPOINT_REMOVE, PayloadCase.WORKLOAD_ENDPOINT_REMOVE,
                        PayloadCase.ACTIVE_POLICY_REMOVE, PayloadCase.ACTIVE_POLICY_REMOVE,
                        PayloadCase.IP_SET_REMOVE, PayloadCase.IP_SET_REMOVE);
        AgentView v = AgentView.of(FULL);
        msgs.forEach(v::apply);
        assertThat(v.toSnapshot("n1"))
                .isEqualTo(AgentView.canonical(IndexedSnapshot.empty("n1").snapshot()));
    }

    @Test
    void unchangedSnapshotNeedsNoMessages() {
        assertThat(messages(diff, idx(FULL), idx(FULL.toBuilder().build()))).isEmpty();
    }

    @Test
    void changedSetTravelsAsMemberDelta() {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            many.add("10.1.0." + i);
        }
        NodeSnapshot a = snapshot(
                "n1",
                List.of(ipSet("s1", many.toArray(String[]::new))),
                List.of(allowIngressFrom("x/p", "s1")),
                List.of(podEndpoint("x", "a", "10.0.0.1", "x/p")));
        List<String> changed = new ArrayList<>(many.subList(1, 50));
        changed.add("10.1.1.1");
        NodeSnapshot b = a.toBuilder()
                .setIpSets(0, ipSet("s1", changed.toArray(String[]::new)))
                .build();

        List<ToAgent> msgs = messages(diff, idx(a), idx(b));

        assertThat(kinds(msgs)).containsOnly(PayloadCase.IP_SET_DELTA_UPDATE);
        List<String> added = msgs.stream()
                .flatMap(m -> m.getIpSetDeltaUpdate().getAddedMembersList().stream())
                .toList();
        List<String> removed = msgs.stream()
                .flatMap(m -> m.getIpSetDeltaUpdate().getRemovedMembersList().stream())
                .toList();
        assertThat(added).containsExactly("10.1.1.1");
        assertThat(removed).containsExactly("10.1.0.0");
    }

    @Test
    void sharedSetTransitionIsComputedOnceForAllNodes() {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            many.add("10.1.0." + i);
        }
        IpSet before = ipSet("shared", many.toArray(String[]::new));
        many.add("10.2.0.1");
        IpSet after = ipSet("shared", many.toArray(String[]::new));
        NodeSnapshot n1a = snapshot("n1", List.of(before), List.of(allowIngressFrom("x/p", "shared")), List.of());
        NodeSnapshot n2a = snapshot("n2", List.of(before), List.of(allowIngressFrom("y/p", "shared")), List.of());
        NodeSnapshot n1b = snapshot("n1", List.of(after), List.of(allowIngressFrom("x/p", "shared")), List.of());
        NodeSnapshot n2b = snapshot("n2", List.of(after), List.of(allowIngressFrom("y/p", "shared")), List.of());

        List<ToAgent> d1 = messages(diff, idx(n1a), idx(n1b));
        List<ToAgent> d2 = messages(diff, idx(n2a), idx(n2b));

        assertThat(d1).hasSize(1);
        assertThat(d1.get(0)).isSameAs(d2.get(0));
        assertThat(d1.get(0).getIpSetDeltaUpdate().getAddedMembersList()).containsExactly("10.2.0.1");
    }

    @Test
    void sharedSetContentIsBuiltOnceForEveryNewAgent() {
        IpSet shared = ipSet("shared", "10.1.0.1", "10.1.0.2");
        NodeSnapshot n1 = snapshot(
                "n1",
                List.of(shared, ipSet("own1", "10.3.0.1")),
                List.of(allowIngressFrom("x/p", "shared", "own1")),
                List.of());
        NodeSnapshot n2 = snapshot(
                "n2",
                List.of(shared, ipSet("own2", "10.3.0.2")),
                List.of(allowIngressFrom("y/p", "shared", "own2")),
                List.of());

        List<Payload> d1 = diff.diff(IndexedSnapshot.empty("n1"), idx(n1));
        List<Payload> d2 = diff.diff(IndexedSnapshot.empty("n2"), idx(n2));

        assertThat(d1.get(0)).isSameAs(d2.get(0)); // one payload, serialized once for both streams
        assertThat(d1.get(0).message().getIpSetUpdate().getMembersList()).containsExactly("10.1.0.1", "10.1.0.2");
        assertThat(d1.get(1)).isNotSameAs(d2.get(1));
        assertThat(d2.get(1).message().getIpSetUpdate().getId()).isEqualTo("own2");
    }

    @Test
    void endpointSwitchingPolicyIsUpdatedBeforeOldPolicyAndSetAreRemoved() {
        NodeSnapshot b = snapshot(
                "n1",
                List.of(ipSet("s2", "10.0.1.1")),
                List.of(allowIngressFrom("x/allow-b", "s2")),
                List.of(podEndpoint("x", "a", "10.0.0.1", "x/allow-b")));
        List<ToAgent> msgs = messages(diff, idx(FULL), idx(b));
        AgentView v = AgentView.of(FULL);
        msgs.forEach(v::apply); // AgentView throws if a removal precedes the update that frees it
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(b));
        assertThat(kinds(msgs))
                .containsExactly(
                        PayloadCase.WORKLOAD_ENDPOINT_UPDATE,
                        PayloadCase.WORKLOAD_ENDPOINT_REMOVE,
                        PayloadCase.ACTIVE_POLICY_REMOVE,
                        PayloadCase.IP_SET_REMOVE);
    }

    @Test
    void largeSetIsChunkedBelowTheBudget() {
        SnapshotDiff small = new SnapshotDiff(4096);
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            members.add("fd00::" + Integer.toHexString(i));
        }
        NodeSnapshot s = snapshot(
                "n1",
                List.of(ipSet("big", members.toArray(String[]::new))),
                List.of(allowIngressFrom("x/p", "big")),
                List.of(podEndpoint("x", "a", "10.0.0.1", "x/p")));

        List<ToAgent> msgs = messages(small, IndexedSnapshot.empty("n1"), idx(s));

        assertThat(msgs.get(0).getPayloadCase()).isEqualTo(PayloadCase.IP_SET_UPDATE);
        assertThat(msgs.stream()
                        .filter(m -> m.getPayloadCase() == PayloadCase.IP_SET_DELTA_UPDATE)
                        .count())
                .isGreaterThan(10);
        // With the sender's envelope (largest sequence and event time) every message stays within budget.
        for (ToAgent m : msgs) {
            assertThat(m.toBuilder()
                            .setSequence(Long.MAX_VALUE)
                            .setEventTimeUnixNanos(Long.MAX_VALUE)
                            .build()
                            .getSerializedSize())
                    .isLessThanOrEqualTo(4096);
        }
        AgentView v = new AgentView();
        msgs.forEach(v::apply);
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(s));

        // And a large change to it travels as chunked deltas too.
        List<String> changed = new ArrayList<>(members.subList(2000, 5000));
        for (int i = 0; i < 1000; i++) {
            changed.add("fd01::" + Integer.toHexString(i));
        }
        NodeSnapshot s2 = s.toBuilder()
                .setIpSets(0, ipSet("big", changed.toArray(String[]::new)))
                .build();
        List<ToAgent> delta = messages(small, idx(s), idx(s2));
        assertThat(delta).allSatisfy(m -> assertThat(m.getSerializedSize()).isLessThan(4096 - 40));
        delta.forEach(v::apply);
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(s2));
    }

    // Audit M1, for agents that enforce before a change is complete (older ones, which ignore
    // change boundaries): a replacement in chunks would leave the set as its first chunk for a
    // while, dropping members that are in it before and after. Sent as deltas, every member
    // changes at most once, from what it was to what it will be.
    @Test
    void aSetReplacedBeyondOneMessageTravelsAsDeltasThatNeverDropAKeptMember() {
        SnapshotDiff small = new SnapshotDiff(4096);
        List<String> before = new ArrayList<>();
        List<String> after = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            before.add(String.format("fd00::%04x", i));
        }
        for (int i = 2000; i < 5000; i++) { // a third kept: added + removed exceed the new size, a replacement before
            after.add(String.format("fd00::%04x", i));
        }
        NodeSnapshot a = snapshot(
                "n1",
                List.of(ipSet("big", before.toArray(String[]::new))),
                List.of(allowIngressFrom("x/p", "big")),
                List.of(podEndpoint("x", "a", "10.0.0.1", "x/p")));
        NodeSnapshot b = a.toBuilder()
                .setIpSets(0, ipSet("big", after.toArray(String[]::new)))
                .build();

        List<ToAgent> msgs = messages(small, idx(a), idx(b));

        assertThat(msgs.size()).as("more than one message").isGreaterThan(1);
        assertThat(kinds(msgs)).containsOnly(PayloadCase.IP_SET_DELTA_UPDATE);
        java.util.Set<String> kept = new java.util.HashSet<>(before);
        kept.retainAll(after);
        java.util.Set<String> either = new java.util.HashSet<>(before);
        either.addAll(after);
        AgentView v = AgentView.of(a);
        for (ToAgent m : msgs) {
            v.apply(m);
            assertThat(v.sets.get("big")).containsAll(kept);
            assertThat(either).containsAll(v.sets.get("big"));
        }
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(b));

        // A replacement that fits in one message is atomic: still sent whole when smaller.
        NodeSnapshot c = a.toBuilder().setIpSets(0, ipSet("big", "fd01::1")).build();
        assertThat(kinds(messages(small, idx(a), idx(c)))).containsExactly(PayloadCase.IP_SET_UPDATE);
    }

    @Test
    void randomTransitionsReachTheTargetWithoutBreakingReferences() {
        Random rnd = new Random(42);
        NodeSnapshot prev = IndexedSnapshot.empty("n1").snapshot();
        AgentView v = new AgentView();
        for (int round = 0; round < 300; round++) {
            NodeSnapshot next = random(rnd);
            messages(diff, idx(prev), idx(next)).forEach(v::apply);
            assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(next));
            prev = next;
        }
    }

    @Test
    void setOnlyChangeWithSharedPartsSendsTheDeltaWithoutIndexingEndpointsOrPolicies() {
        IpSet grown = ipSet("s1", "10.0.0.1", "10.0.0.2", "10.0.0.3");
        // Same policy and endpoint instances, as the calculator hands them over for a set-only change.
        NodeSnapshot b = FULL.toBuilder().setIpSets(0, grown).build();
        IndexedSnapshot from = idx(FULL);
        IndexedSnapshot to = idx(b);

        List<ToAgent> msgs = messages(diff, from, to);

        assertThat(kinds(msgs)).containsExactly(PayloadCase.IP_SET_DELTA_UPDATE);
        assertThat(msgs.get(0).getIpSetDeltaUpdate().getAddedMembersList()).containsExactly("10.0.0.3");
        assertThat(from.policiesOrEndpointsIndexed()).isFalse();
        assertThat(to.policiesOrEndpointsIndexed()).isFalse();
    }

    @Test
    void equalCopiesAndReorderedInstancesAreComparedByKeyAndContent() {
        Endpoint a = FULL.getEndpoints(0);
        Endpoint b = FULL.getEndpoints(1);
        Endpoint aCopy = a.toBuilder().build();
        Endpoint bMoved = podEndpoint("x", "b", "10.0.0.9", "x/allow-b");
        NodeSnapshot reordered = FULL.toBuilder()
                .clearEndpoints()
                .addEndpoints(b)
                .addEndpoints(a)
                .build();
        NodeSnapshot copiedAndChanged =
                FULL.toBuilder().setEndpoints(0, aCopy).setEndpoints(1, bMoved).build();

        assertThat(messages(diff, idx(FULL), idx(reordered))).isEmpty();
        List<ToAgent> msgs = messages(diff, idx(FULL), idx(copiedAndChanged));
        assertThat(kinds(msgs)).containsExactly(PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
        assertThat(msgs.get(0).getWorkloadEndpointUpdate().getId().getPod()).isEqualTo("b");
    }

    @Test
    void sharedInstancesGiveTheSameMessagesAsDistinctCopies() throws Exception {
        Random rnd = new Random(7);
        Map<Object, Object> pool = new HashMap<>(); // one instance per content, like the calculator's caches
        NodeSnapshot prev = IndexedSnapshot.empty("n1").snapshot();
        for (int round = 0; round < 300; round++) {
            NodeSnapshot fresh = random(rnd);
            NodeSnapshot.Builder shared = NodeSnapshot.newBuilder().setNode("n1");
            fresh.getIpSetsList().forEach(s -> shared.addIpSets((IpSet) pool.computeIfAbsent(s, k -> k)));
            fresh.getPoliciesList().forEach(p -> shared.addPolicies((ActivePolicy) pool.computeIfAbsent(p, k -> k)));
            fresh.getEndpointsList().forEach(e -> shared.addEndpoints((Endpoint) pool.computeIfAbsent(e, k -> k)));
            NodeSnapshot next = shared.build();

            List<ToAgent> byIdentity = messages(diff, idx(prev), idx(next));
            List<ToAgent> byContent = messages(
                    new SnapshotDiff(1 << 20),
                    idx(NodeSnapshot.parseFrom(prev.toByteArray())),
                    idx(NodeSnapshot.parseFrom(next.toByteArray())));

            assertThat(byIdentity).isEqualTo(byContent);
            prev = next;
        }
    }

    @Test
    void setMemberDeltaEqualsTheNaiveDifferenceForSortedAndUnsortedLists() {
        Random rnd = new Random(11);
        for (int round = 0; round < 400; round++) {
            List<String> before = randomMembers(rnd);
            List<String> after = randomMembers(rnd);
            if (round % 4 == 3) {
                java.util.Collections.shuffle(after, rnd); // not sorted: the hashing path
                if (!after.isEmpty()) {
                    after.add(after.get(0)); // and a duplicate
                }
            }
            NodeSnapshot a = snapshot(
                    "n1",
                    List.of(ipSet("s", before.toArray(String[]::new))),
                    List.of(allowIngressFrom("x/p", "s")),
                    List.of());
            NodeSnapshot b = a.toBuilder()
                    .setIpSets(0, ipSet("s", after.toArray(String[]::new)))
                    .build();

            List<ToAgent> msgs = messages(diff, idx(a), idx(b));

            if (msgs.stream().anyMatch(ToAgent::hasIpSetUpdate)) {
                assertThat(kinds(msgs)).containsExactly(PayloadCase.IP_SET_UPDATE); // replaced: no smaller delta
                assertThat(msgs.get(0).getIpSetUpdate().getMembersList()).isEqualTo(after);
                continue;
            }
            List<String> added = msgs.stream()
                    .flatMap(m -> m.getIpSetDeltaUpdate().getAddedMembersList().stream())
                    .toList();
            List<String> removed = msgs.stream()
                    .flatMap(m -> m.getIpSetDeltaUpdate().getRemovedMembersList().stream())
                    .toList();
            assertThat(added)
                    .as("round %d", round)
                    .isEqualTo(after.stream().filter(m -> !before.contains(m)).toList());
            assertThat(removed)
                    .as("round %d", round)
                    .isEqualTo(before.stream().filter(m -> !after.contains(m)).toList());
        }
    }

    private static List<String> randomMembers(Random rnd) {
        java.util.TreeSet<String> m = new java.util.TreeSet<>();
        int n = rnd.nextInt(40);
        for (int i = 0; i < n; i++) {
            m.add("10.0." + rnd.nextInt(3) + "." + rnd.nextInt(30));
        }
        return new ArrayList<>(m);
    }

    @Test
    void setsListedUnderTheSameIdsArePairedWithoutIndexing() {
        IpSet grown = ipSet("s1", "10.0.0.1", "10.0.0.2", "10.0.0.3");
        NodeSnapshot b = FULL.toBuilder().setIpSets(0, grown).build();
        IndexedSnapshot from = idx(FULL);
        IndexedSnapshot to = idx(b);

        assertThat(kinds(messages(diff, from, to))).containsExactly(PayloadCase.IP_SET_DELTA_UPDATE);
        assertThat(from.ipSetsIndexed()).isFalse();
        assertThat(to.ipSetsIndexed()).isFalse();

        // Another id in the list: by id, with the removal.
        NodeSnapshot c = FULL.toBuilder().setIpSets(1, ipSet("s3", "10.0.3.1")).build();
        assertThat(kinds(messages(diff, idx(FULL), idx(c))))
                .containsExactly(PayloadCase.IP_SET_UPDATE, PayloadCase.IP_SET_REMOVE);
    }

    @Test
    void concurrentSendersComputeASharedTransitionOnce() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            many.add(String.format("10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255));
        }
        IpSet before = ipSet("shared", many.toArray(String[]::new));
        many.remove(7);
        IpSet after = ipSet("shared", many.toArray(String[]::new));
        int threads = 8;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        try {
            List<java.util.concurrent.Future<ToAgent>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String node = "n" + t;
                results.add(pool.submit(() -> {
                    NodeSnapshot a =
                            snapshot(node, List.of(before), List.of(allowIngressFrom("x/p", "shared")), List.of());
                    NodeSnapshot b =
                            snapshot(node, List.of(after), List.of(allowIngressFrom("x/p", "shared")), List.of());
                    start.await();
                    return messages(diff, idx(a), idx(b)).get(0);
                }));
            }
            ToAgent first = results.get(0).get();
            for (var r : results) {
                assertThat(r.get()).isSameAs(first);
            }
            assertThat(first.getIpSetDeltaUpdate().getRemovedMembersList()).containsExactly("10.0.0.7");
            assertThat(diff.computedLists()).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A self-consistent random snapshot over a small universe of ids, so transitions overlap. */
    static NodeSnapshot random(Random rnd) {
        List<IpSet> sets = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            if (rnd.nextBoolean()) {
                List<String> m = new ArrayList<>();
                for (int j = 0; j < 8; j++) {
                    if (rnd.nextInt(3) == 0) {
                        m.add("10.0." + i + "." + j);
                    }
                }
                sets.add(ipSet("s" + i, m.toArray(String[]::new)));
            }
        }
        List<ActivePolicy> pols = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            if (rnd.nextBoolean()) {
                List<String> refs = new ArrayList<>();
                for (IpSet s : sets) {
                    if (rnd.nextBoolean()) {
                        refs.add(s.getId());
                    }
                }
                pols.add(allowIngressFrom("x/p" + i, refs.toArray(String[]::new)));
            }
        }
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            if (rnd.nextBoolean()) {
                List<String> refs = new ArrayList<>();
                for (ActivePolicy p : pols) {
                    if (rnd.nextBoolean()) {
                        refs.add(p.getId().getName());
                    }
                }
                eps.add(podEndpoint("x", "pod" + i, "10.9.0." + rnd.nextInt(3), refs.toArray(String[]::new)));
            }
        }
        return snapshot("n1", sets, pols, eps);
    }
}
