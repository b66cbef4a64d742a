// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PolicySyncServiceTest {
    private static final NodeSnapshot A = snapshot(
            "n1",
            List.of(ipSet("s1", "10.0.0.1", "10.0.0.2")),
            List.of(allowIngressFrom("x/allow-a", "s1")),
            List.of(podEndpoint("x", "a", "10.0.0.1", "x/allow-a"), podEndpoint("x", "b", "10.0.0.2")));
    private static final NodeSnapshot B = snapshot(
            "n1",
            List.of(ipSet("s1", "10.0.0.1", "10.0.0.3")),
            List.of(allowIngressFrom("x/allow-a", "s1")),
            List.of(podEndpoint("x", "a", "10.0.0.1", "x/allow-a")));

    private SyncServerFixture f;

    @AfterEach
    void tearDown() throws Exception {
        if (f != null) {
            f.close();
        }
    }

    @Test
    void sendsSnapshotThenInSyncThenOnlyDeltas() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            assertThat(agent.state("n1")).isEqualTo(AgentView.canonical(A));
            assertThat(agent.view.received)
                    .allSatisfy(m -> assertThat(m.getEventTimeUnixNanos()).isZero());
            assertThat(agent.view.received.get(0).getSequence()).isEqualTo(1);

            f.hub.publish(B, 1234567L);
            agent.readUntil(B);

            // Half of the 2-member set changed: replacing it is no larger than a delta.
            assertThat(agent.view.deltas)
                    .extracting(ToAgent::getPayloadCase)
                    .containsExactly(PayloadCase.IP_SET_UPDATE, PayloadCase.WORKLOAD_ENDPOINT_REMOVE);
            assertThat(agent.view.deltas)
                    .allSatisfy(m -> assertThat(m.getEventTimeUnixNanos()).isEqualTo(1234567L));
        }
    }

    // Audit M1: the agent enforces only complete changes, so every change must say where it ends.
    @Test
    void theFirstInSyncAnnouncesChangeBoundariesAndEveryChangeEndsWithOne() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            many.add("fd00::" + Integer.toHexString(i));
        }
        NodeSnapshot big = A.toBuilder()
                .setIpSets(0, ipSet("s1", many.toArray(String[]::new)))
                .build();
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            ToAgent first = agent.view.received.get(agent.view.received.size() - 1);
            assertThat(first.getInSync().getChangeBoundaries())
                    .as("announced in the first InSync")
                    .isTrue();

            f.hub.publish(B, 1111L);
            agent.readUntil(B);
            f.hub.publish(big, 2222L); // a set replaced whole
            agent.readUntil(big);
            f.hub.publish(A, 3333L);
            agent.readUntil(A);

            // Each change ends with exactly one boundary, carrying the change's event time (the
            // programming latency is measured to it), right after the change's last message.
            assertThat(agent.boundaries())
                    .extracting(ToAgent::getEventTimeUnixNanos)
                    .containsExactly(1111L, 2222L, 3333L);
            assertThat(agent.boundaries())
                    .allSatisfy(
                            b -> assertThat(b.getInSync().getChangeBoundaries()).isTrue());
            List<ToAgent> after =
                    agent.view.received.subList(agent.view.received.indexOf(first) + 1, agent.view.received.size());
            assertThat(after.get(after.size() - 1).hasInSync()).isTrue();
            for (int i = 0; i < after.size() - 1; i++) {
                if (after.get(i).hasInSync()) {
                    assertThat(after.get(i + 1).hasInSync())
                            .as("an empty change at %d", i)
                            .isFalse();
                }
            }
        }
    }

    @Test
    void aChunkedSetChangeEndsWithOneBoundaryAfterItsLastChunk() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            many.add("fd00::" + Integer.toHexString(i));
        }
        NodeSnapshot big = A.toBuilder()
                .setIpSets(0, ipSet("s1", many.toArray(String[]::new)))
                .build();
        f = new SyncServerFixture(new PolicySyncService.Options(4096, Duration.ofSeconds(60), Duration.ofSeconds(1)));
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            f.hub.publish(big, 5L);
            agent.readUntil(big);
            assertThat(agent.deltas().size()).as("chunks").isGreaterThan(5);
            assertThat(agent.boundaries()).hasSize(1);
            assertThat(agent.view.received.get(agent.view.received.size() - 1).hasInSync())
                    .isTrue();
        }
    }

    @Test
    void sharedSetChangeReachesStreamsAtDifferentSequencesWithTheSamePayloadAndTheirOwnSequence() throws Exception {
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            members.add("10.1.0." + i);
        }
        var before = ipSet("shared", members.toArray(String[]::new));
        members.add("10.2.0.1");
        var after = ipSet("shared", members.toArray(String[]::new));
        // n1 has more endpoints than n2, so its snapshot takes more messages: the streams'
        // sequences differ when the shared set changes. Parts are reused instances, as from the engine.
        NodeSnapshot n1a = snapshot(
                "n1",
                List.of(before),
                List.of(allowIngressFrom("x/p", "shared")),
                List.of(
                        podEndpoint("x", "a", "10.0.0.1", "x/p"),
                        podEndpoint("x", "b", "10.0.0.2", "x/p"),
                        podEndpoint("x", "c", "10.0.0.3", "x/p")));
        NodeSnapshot n2a = snapshot(
                "n2",
                List.of(before),
                List.of(allowIngressFrom("y/p", "shared")),
                List.of(podEndpoint("y", "d", "10.0.0.4", "y/p")));
        NodeSnapshot n1b = n1a.toBuilder().setIpSets(0, after).build();
        NodeSnapshot n2b = n2a.toBuilder().setIpSets(0, after).build();
        f = new SyncServerFixture();
        f.hub.publish(n1a, 0);
        f.hub.publish(n2a, 0);
        f.hub.markReady();
        try (TestAgent one = f.agent("n1");
                TestAgent two = f.agent("n2")) {
            one.readUntilInSync();
            two.readUntilInSync();
            long seq1 = one.view.received.get(one.view.received.size() - 1).getSequence();
            long seq2 = two.view.received.get(two.view.received.size() - 1).getSequence();
            assertThat(seq1).isNotEqualTo(seq2);

            f.hub.publish(n1b, 111L);
            f.hub.publish(n2b, 222L);
            one.readUntil(n1b);
            two.readUntil(n2b);

            assertThat(one.deltas()).hasSize(1);
            assertThat(two.deltas()).hasSize(1);
            ToAgent d1 = one.deltas().get(0);
            ToAgent d2 = two.deltas().get(0);
            assertThat(d1.getIpSetDeltaUpdate()).isEqualTo(d2.getIpSetDeltaUpdate());
            assertThat(d1.getIpSetDeltaUpdate().getAddedMembersList()).containsExactly("10.2.0.1");
            assertThat(d1.getSequence()).isEqualTo(seq1 + 1);
            assertThat(d2.getSequence()).isEqualTo(seq2 + 1);
            assertThat(d1.getEventTimeUnixNanos()).isEqualTo(111L);
            assertThat(d2.getEventTimeUnixNanos()).isEqualTo(222L);
        }
    }

    @Test
    void waitsForTheFirstFullCalculationBeforeSendingAnything() throws Exception {
        f = new SyncServerFixture();
        try (TestAgent agent = f.agent("n1")) {
            f.hub.publish(A, 0);
            f.hub.publish(B, 0);
            assertThat(agent.buffered()).isZero();
            f.hub.markReady();
            agent.readUntilInSync();
            // The first thing the agent sees is the latest snapshot, complete, with no stale state.
            assertThat(agent.state("n1")).isEqualTo(AgentView.canonical(B));
        }
    }

    @Test
    void nodeWithoutEndpointsGetsEmptySnapshotAndInSync() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("idle-node")) {
            ToAgent first = agent.next();
            assertThat(first.getPayloadCase()).isEqualTo(PayloadCase.IN_SYNC);
            assertThat(first.getSequence()).isEqualTo(1);
        }
    }

    @Test
    void reconnectingAgentGetsConsistentFullSnapshot() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        TestAgent first = f.agent("n1");
        first.readUntilInSync();
        first.close();
        // Changes while the agent is away, including removals it never heard of.
        f.hub.publish(B, 10);
        NodeSnapshot c = B.toBuilder()
                .addEndpoints(podEndpoint("y", "c", "10.0.9.9", "x/allow-a"))
                .build();
        f.hub.publish(c, 20);
        try (TestAgent second = f.agent("n1")) {
            second.readUntilInSync();
            assertThat(second.state("n1")).isEqualTo(AgentView.canonical(c));
            assertThat(second.view.received.get(0).getSequence()).isEqualTo(1);
            // Nothing is lost after the reconnect either.
            NodeSnapshot d = c.toBuilder().removeEndpoints(0).build();
            f.hub.publish(d, 30);
            second.readUntil(d);
        }
    }

    @Test
    void appliedReportsGiveLagAndProgrammingLatency() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            long eventTime = PolicySyncService.unixNanos();
            f.hub.publish(B, eventTime);
            agent.readUntil(B);
            long last = agent.view.lastSequence;

            NodeStatus before = status("n1");
            assertThat(before.getConnected()).isTrue();
            assertThat(before.getAgentVersion()).isEqualTo("test");
            assertThat(before.getSentSequence()).isEqualTo(last);
            assertThat(before.getLag()).isEqualTo(last);

            PolicySyncGrpc.newBlockingStub(f.channel)
                    .reportApplied(AppliedReport.newBuilder()
                            .setNode("n1")
                            .setAppliedSequence(last)
                            .build());

            NodeStatus after = status("n1");
            assertThat(after.getAppliedSequence()).isEqualTo(last);
            assertThat(after.getLag()).isZero();
            assertThat(f.metrics.programmingLatencyTimer().count()).isEqualTo(1);
            // What `kube-verdict status` shows: in sync, the node's latency window, last contact.
            assertThat(before.getInSync())
                    .as("no report yet: the first snapshot is not applied")
                    .isFalse();
            assertThat(after.getInSync()).isTrue();
            assertThat(after.getProgrammingLatencySamples()).isEqualTo(1);
            assertThat(com.google.protobuf.util.Durations.toNanos(after.getProgrammingLatencyP99()))
                    .isEqualTo(com.google.protobuf.util.Durations.toNanos(after.getProgrammingLatencyP50()))
                    .isPositive();
            assertThat(com.google.protobuf.util.Timestamps.toNanos(after.getLastContact()))
                    .isGreaterThanOrEqualTo(eventTime);
            assertThat(f.sync.nodeCounts()).isEqualTo(new ControlPlaneMetrics.NodeCounts(1, 0, 0, 0, 0));
        }
    }

    @Test
    void aStreamReportsTheSourceRevisionItHasSentInFull() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.publishSourceRevision("r1");
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1");
                TestAgent other = f.agent("n2")) {
            agent.readUntilInSync();
            other.readUntilInSync();
            awaitStatus("n1", s -> s.getSourceRevision().equals("r1"));
            assertThat(status("n1").getSentSequence()).isEqualTo(agent.view.lastSequence);

            // n1 changes with r2; n2 does not, and still reports r2 once it has nothing left to send.
            f.hub.publish(B, 1);
            f.hub.publishSourceRevision("r2");
            agent.readUntil(B);
            awaitStatus("n1", s -> s.getSourceRevision().equals("r2"));
            assertThat(status("n1").getSentSequence()).isEqualTo(agent.view.lastSequence);
            awaitStatus("n2", s -> s.getSourceRevision().equals("r2"));
        }
    }

    private void awaitStatus(String node, java.util.function.Predicate<NodeStatus> condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.test(status(node))) {
            assertThat(System.nanoTime())
                    .as("status of " + node + ": " + status(node))
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void aHeartbeatMovesLastContactAndAppliesNothing() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            long last = agent.view.lastSequence;
            NodeStatus connected = status("n1");
            long openedAt = com.google.protobuf.util.Timestamps.toNanos(connected.getLastContact());
            // The idle agent says it is alive; the wall clock moves on meanwhile (nanoseconds).
            long later = openedAt;
            while (later <= openedAt) {
                later = PolicySyncService.unixNanos();
            }
            PolicySyncGrpc.newBlockingStub(f.channel)
                    .reportApplied(AppliedReport.newBuilder()
                            .setNode("n1")
                            .setHeartbeat(true)
                            .build());

            NodeStatus after = status("n1");
            assertThat(com.google.protobuf.util.Timestamps.toNanos(after.getLastContact()))
                    .isGreaterThanOrEqualTo(later);
            assertThat(after.getAppliedSequence())
                    .as("a heartbeat applies nothing")
                    .isZero();
            assertThat(after.getLag()).isEqualTo(last);
            assertThat(after.getInSync()).isFalse();
            assertThat(f.metrics.programmingLatencyTimer().count()).isZero();
        }
    }

    private NodeStatus status(String node) {
        // The inspection service reads the same registry; here straight from the sync service.
        return f.sync.nodeStatuses().stream()
                .filter(s -> s.getNode().equals(node))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void agentThatDoesNotReadGetsCoalescedStateWithBoundedBuffering() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.markReady();
        TestAgent slow = TestAgent.connect(f.channel, "n1", false);
        slow.request(1); // one more beyond the initial one, then nothing
        // 2000 versions, each changing a label of a fat endpoint: far more than the transport buffers.
        String fat = "x".repeat(8_000);
        NodeSnapshot last = null;
        for (int i = 0; i < 2000; i++) {
            Endpoint e = podEndpoint("x", "a", "10.0.0.1", "x/allow-a");
            e = e.toBuilder()
                    .setEndpoint(e.getEndpoint().toBuilder().putLabels("v", i + fat))
                    .build();
            last = A.toBuilder().setEndpoints(0, e).build();
            f.hub.publish(last, 1000 + i);
        }
        double sentWhileStuck = f.metrics.messagesSent();
        // Far fewer messages than versions went out: the rest collapsed into the latest state.
        assertThat(sentWhileStuck).isLessThan(500);
        for (SyncSession s : sessions("n1")) {
            assertThat(s.pendingMessages())
                    .isLessThanOrEqualTo(A.getEndpointsCount() + A.getPoliciesCount() + A.getIpSetsCount() + 1);
        }
        slow.request(Integer.MAX_VALUE);
        slow.readUntilInSync();
        slow.readUntil(last);
        assertThat(f.metrics.messagesSent()).isLessThan(1000);
        slow.close();
    }

    @Test
    void agentStuckForTooLongIsCutAndCanResync() throws Exception {
        f = new SyncServerFixture(
                new PolicySyncService.Options(1 << 20, Duration.ofMillis(300), Duration.ofMillis(50)));
        f.hub.publish(A, 0);
        f.hub.markReady();
        TestAgent stuck = TestAgent.connect(f.channel, "n1", false);
        String fat = "y".repeat(50_000);
        NodeSnapshot last = A;
        for (int i = 0;
                f.metrics
                                .registry()
                                .get("kubeverdict_sync_streams_cut_total")
                                .counter()
                                .count()
                        == 0;
                i++) {
            Endpoint e = podEndpoint("x", "a", "10.0.0.1", "x/allow-a");
            e = e.toBuilder()
                    .setEndpoint(e.getEndpoint().toBuilder().putLabels("v", i + fat))
                    .build();
            last = A.toBuilder().setEndpoints(0, e).build();
            f.hub.publish(last, 1);
            Thread.sleep(20);
            if (i > 5000) {
                throw new AssertionError("stream was never cut");
            }
        }
        stuck.request(Integer.MAX_VALUE);
        Status end = stuck.readUntilEnd();
        assertThat(end.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        try (TestAgent again = f.agent("n1")) {
            again.readUntilInSync();
            assertThat(again.state("n1")).isEqualTo(AgentView.canonical(last));
        }
    }

    @Test
    void listNodesShowsConnectedAgentsAndSnapshotNodes() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(A, 0);
        f.hub.publish(snapshot("n2", List.of(), List.of(), List.of(podEndpoint("y", "z", "10.0.5.5"))), 0);
        f.hub.markReady();
        // Inspection is served by the same kind of endpoint in production; here on its own.
        try (TestAgent agent = f.agent("n1")) {
            agent.readUntilInSync();
            List<NodeStatus> statuses = new ArrayList<>(f.sync.nodeStatuses());
            assertThat(statuses).extracting(NodeStatus::getNode).containsExactly("n1");
            assertThat(statuses.get(0).getConnected()).isTrue();
        }
    }

    private List<SyncSession> sessions(String node) {
        return f.sync.sessionsOf(node);
    }

    @SuppressWarnings("unused")
    private static final Class<?> INSPECTION = ControlPlaneInspectionGrpc.class;

    @SuppressWarnings("unused")
    private static final ListNodesRequest LIST = ListNodesRequest.getDefaultInstance();
}
