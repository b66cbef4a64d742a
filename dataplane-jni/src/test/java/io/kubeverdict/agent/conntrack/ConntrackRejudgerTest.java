// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.agent.conntrack.TestSnapshots.allowFrom;
import static io.kubeverdict.agent.conntrack.TestSnapshots.endpoint;
import static io.kubeverdict.agent.conntrack.TestSnapshots.node;
import static io.kubeverdict.agent.conntrack.TestSnapshots.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.agent.state.SelectedAddresses;
import io.kubeverdict.jni.ConntrackEntriesFixture.Entry;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.Errno;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.DecisionText;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.runtime.FatalThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConntrackRejudgerTest {
    private static final int A = FlowMarks.ADMITTED;
    private static final String NODE_IP = "10.0.0.254";

    private final FakeConntrackTable table = new FakeConntrackTable();
    private final Recorder observer = new Recorder();
    private final List<String> cuts = new CopyOnWriteArrayList<>();
    private ConntrackRejudger rejudger;

    private ConntrackRejudger start() {
        rejudger = new ConntrackRejudger(
                () -> table,
                () -> Set.of(IpAddress.parse(NODE_IP)),
                timeout -> {
                    table.events.add("await verdicts");
                    return true;
                },
                (tuple, srcPort, id, code, state) -> cuts.add(tuple + " from port " + srcPort + " id " + id + ": "
                        + new DecisionText(state.index()).describe(code) + " at " + state.sequence()),
                observer,
                System::nanoTime);
        return rejudger;
    }

    @AfterEach
    void stop() {
        if (rejudger != null) {
            rejudger.close();
        }
    }

    private static EnforcedState state(NodeSnapshot s, long sequence) {
        return new EnforcedState(s, SnapshotIndex.compile(s), SelectedAddresses.of(s), sequence, 0);
    }

    /** b (10.0.0.2) admits set sa (10.0.0.1) on these TCP ports; c (10.0.0.3) admits sa on 81 (or b unselected). */
    private static NodeSnapshot snapshot(boolean bSelected, int... bPorts) {
        return node().addIpSets(set("sa", "10.0.0.1"))
                .addPolicies(allowFrom("pb", "sa", bPorts))
                .addPolicies(allowFrom("pc", "sa", 81))
                .addEndpoints(endpoint("a", "10.0.0.1"))
                .addEndpoints(bSelected ? endpoint("b", "10.0.0.2", "pb") : endpoint("b", "10.0.0.2"))
                .addEndpoints(endpoint("c", "10.0.0.3", "pc"))
                .build();
    }

    private void judge(EnforcedState before, EnforcedState now, boolean everything) throws InterruptedException {
        rejudger.changed(before, now, everything);
        assertThat(rejudger.awaitJudged(10_000))
                .as("judged; events %s", table.events)
                .isTrue();
    }

    @Test
    void aChangeCutsExactlyTheAdmittedConnectionsItDenies() throws Exception {
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1000, "10.0.0.2", 80, A, 1),
                Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, A, 2),
                Entry.of(6, "10.0.0.1", 1002, "10.0.0.2", 81, A | FlowMarks.CUT, 3),
                Entry.of(6, "10.0.0.1", 1003, "10.0.0.2", 81, A, 4).withTcpState(7),
                Entry.of(6, "10.0.0.1", 1004, "10.0.0.3", 81, A, 5),
                Entry.of(6, NODE_IP, 5000, "10.0.0.2", 81, 0, 6),
                Entry.of(17, "10.0.0.1", 1005, "10.0.0.2", 81, A, 7)));
        start();
        EnforcedState before = state(snapshot(true, 80, 81), 1);
        EnforcedState after = state(snapshot(true, 80), 2);
        judge(null, before, true);
        assertThat(cuts)
                .as("at start: the policy admits TCP only")
                .containsExactly(
                        "10.0.0.1 -> 10.0.0.2 proto 17 port 81 from port 1005 id 7: DENY ingress: no rule matched: denied by the default of tier default at 1");

        cuts.clear();
        table.events.clear();
        judge(before, after, false);
        assertThat(cuts)
                .containsExactly(
                        "10.0.0.1 -> 10.0.0.2 proto 6 port 81 from port 1001 id 2: DENY ingress: no rule matched: denied by the default of tier default at 2");
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
        assertThat(table.markOf(1)).as("still allowed").isEqualTo(A);
        assertThat(table.markOf(4)).as("closed already").isEqualTo(A);
        assertThat(table.markOf(5)).as("another endpoint's").isEqualTo(A);
        assertThat(table.markOf(6)).as("the node's own").isZero();
        assertThat(observer.cut.get()).isEqualTo(2);
        assertThat(observer.lastPending).isZero();
        List<ConntrackQuery> last = table.queries.subList(table.queries.size() - 2, table.queries.size());
        assertThat(last)
                .as("only b's admitted, uncut connections, from and to it")
                .containsExactly(
                        ConntrackQuery.of(
                                IpAddress.parse("10.0.0.2"), ConntrackQuery.Match.ORIGINAL_SOURCE, A, FlowMarks.OURS),
                        ConntrackQuery.of(
                                IpAddress.parse("10.0.0.2"), ConntrackQuery.Match.REPLY_SOURCE, A, FlowMarks.OURS));
        assertThat(table.events)
                .as("verdicts in flight answered before dumping")
                .containsExactly("await verdicts", "dump", "dump", "mark 2");
    }

    /**
     * Audit M4: an Error on the re-judging thread ends the process (its exit observed here) and
     * fails health; before, the thread died alone and denied connections stayed open.
     */
    @Test
    void anErrorOnTheRejudgingThreadIsFatal() throws Exception {
        try (FatalThreads.Observed observed = FatalThreads.observeForTest()) {
            rejudger = new ConntrackRejudger(
                    () -> table,
                    () -> Set.of(IpAddress.parse(NODE_IP)),
                    timeout -> {
                        throw new AssertionError("in flight");
                    },
                    (tuple, srcPort, id, code, state) -> cuts.add("cut"),
                    observer,
                    System::nanoTime);
            rejudger.changed(null, state(snapshot(true, 80), 1), true);
            long deadline = System.nanoTime() + 30_000_000_000L;
            // the death is recorded before the exit is asked for (on another thread): wait for both
            while ((FatalThreads.healthy() || observed.exitCodes().isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(FatalThreads.death()).contains("kv-conntrack").contains("AssertionError: in flight");
            assertThat(observed.exitCodes()).containsExactly(FatalThreads.EXIT_CODE);
        }
    }

    @Test
    void theFirstPolicyOfAPodJudgesItsUnmarkedConnectionsButNotTheNodes() throws Exception {
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1000, "10.0.0.2", 80, 0, 1),
                Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, 0, 2),
                Entry.of(6, NODE_IP, 5000, "10.0.0.2", 81, 0, 3)));
        start();
        EnforcedState open = state(snapshot(false, 80), 1);
        judge(null, open, true);
        judge(open, state(snapshot(true, 80), 2), false);
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
        assertThat(table.markOf(1)).as("allowed, now known as admitted").isEqualTo(A);
        assertThat(table.markOf(3)).as("the node's own connection").isZero();
        assertThat(table.queries)
                .contains(ConntrackQuery.of(
                        IpAddress.parse("10.0.0.2"), ConntrackQuery.Match.REPLY_SOURCE, 0, FlowMarks.CUT));
    }

    /**
     * Audit M9: the kernel's conntrack id is a 32-bit hash, so two live connections can share it;
     * before, the second was skipped as "seen" and stayed open although the policy denied it.
     */
    @Test
    void twoConnectionsWithTheSameConntrackIdAreBothJudged() throws Exception {
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, A, 7),
                Entry.of(6, "10.0.0.1", 1002, "10.0.0.2", 81, A, 7)));
        start();
        EnforcedState before = state(snapshot(true, 80, 81), 1);
        judge(null, before, true);
        judge(before, state(snapshot(true, 80), 2), false);
        assertThat(table.markOfSourcePort(1001)).isEqualTo(FlowMarks.CUT);
        assertThat(table.markOfSourcePort(1002)).isEqualTo(FlowMarks.CUT);
        assertThat(observer.cut.get()).isEqualTo(2);
    }

    /** A connection between two affected endpoints is in both their dumps and is judged once. */
    @Test
    void aConnectionBetweenTwoAffectedEndpointsIsJudgedOnce() throws Exception {
        NodeSnapshot s = node().addIpSets(set("sa", "10.0.0.1"))
                .addPolicies(allowFrom("pb", "sa", 80))
                .addEndpoints(endpoint("a", "10.0.0.1", "pb"))
                .addEndpoints(endpoint("b", "10.0.0.2", "pb"))
                .build();
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1000, "10.0.0.2", 80, 0, 1), // from a's dump and from b's
                Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, 0, 2),
                Entry.of(6, "10.0.0.1", 1002, "10.0.0.1", 80, 0, 3))); // a to itself: both of a's dumps
        start();
        judge(null, state(s, 1), true);
        assertThat(table.queries).hasSize(4);
        assertThat(observer.examined.get()).isEqualTo(3);
        assertThat(observer.cut.get()).isEqualTo(1);
        assertThat(table.markOf(1)).isEqualTo(A);
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
        assertThat(table.markOf(3)).isEqualTo(A);
    }

    @Test
    void lostDumpsAreRetriedAndAnEndpointStaysPendingUntilItsConnectionsAreJudged() throws Exception {
        table.entries.add(Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, A, 2));
        start();
        EnforcedState before = state(snapshot(true, 80, 81), 1);
        judge(null, before, true);

        table.dumpErrno = Errno.ENOBUFS;
        table.failDumps = 2; // within one dump's attempts
        judge(before, state(snapshot(true, 80), 2), false);
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
        assertThat(observer.dumpErrors).containsEntry(Errno.ENOBUFS, 2);

        table.entries.add(Entry.of(6, "10.0.0.1", 1002, "10.0.0.2", 81, A, 3));
        table.dumpErrno = Errno.EBADF;
        table.failDumps = 3; // breaks a pass: b waits and is retried
        EnforcedState again = state(snapshot(true, 82), 3);
        rejudger.changed(state(snapshot(true, 80), 2), again, false);
        assertThat(rejudger.awaitJudged(10_000)).isTrue();
        assertThat(table.markOf(3)).isEqualTo(FlowMarks.CUT);
        assertThat(observer.incomplete.get()).isPositive();
        assertThat(observer.pendingSeen).as("counted while it waited").contains(1);
        assertThat(observer.lastPending).isZero();
    }

    /** Audit M9: the re-judging says since when it is behind, also while a pass runs, until it caught up. */
    @Test
    void itReportsSinceWhenItIsBehindUntilEveryChangeIsJudged() throws Exception {
        table.entries.add(Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, A, 2));
        table.dumpErrno = Errno.EBADF;
        table.failDumps = Integer.MAX_VALUE;
        start();
        long before = System.nanoTime();
        rejudger.changed(null, state(snapshot(true, 80), 1), true);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (observer.incomplete.get() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(observer.incomplete.get()).as("retried").isGreaterThanOrEqualTo(2);
        assertThat(observer.behindSince).as("the change's time").isBetween(before, System.nanoTime());
        assertThat(observer.lastPending).as("b and c wait").isEqualTo(2);
        table.failDumps = 0;
        assertThat(rejudger.awaitJudged(10_000)).isTrue();
        assertThat(observer.behindSince).as("caught up").isEqualTo(Long.MIN_VALUE);
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
    }

    @Test
    void aFailedCutIsRetriedAndAVanishedConnectionIsCounted() throws Exception {
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1001, "10.0.0.2", 81, A, 2),
                Entry.of(6, "10.0.0.1", 1002, "10.0.0.2", 81, A, 3)));
        start();
        EnforcedState before = state(snapshot(true, 80, 81), 1);
        judge(null, before, true);
        table.failMarks = 1;
        table.markErrno = Errno.ENOMEM;
        table.vanishOnMark = 3;
        judge(before, state(snapshot(true, 80), 2), false);
        assertThat(table.markOf(2)).as("cut on the retry").isEqualTo(FlowMarks.CUT);
        assertThat(observer.cutErrors).containsEntry(Errno.ENOMEM, 1);
        assertThat(observer.vanished.get()).isEqualTo(1);
        assertThat(observer.cut.get()).isEqualTo(1);
    }

    @Test
    void manyEndpointsAreJudgedFromOneMarkFilteredDumpPerFamily() throws Exception {
        NodeSnapshot.Builder before = node().addIpSets(set("sa", "10.0.0.1")).addPolicies(allowFrom("p", "sa", 80, 81));
        NodeSnapshot.Builder after = node().addIpSets(set("sa", "10.0.0.1")).addPolicies(allowFrom("p", "sa", 80));
        for (int i = 0; i < 20; i++) {
            before.addEndpoints(endpoint("b" + i, List.of("10.0.1." + i, "fd00::" + (i + 1)), "p"));
            after.addEndpoints(endpoint("b" + i, List.of("10.0.1." + i, "fd00::" + (i + 1)), "p"));
            table.entries.add(Entry.of(6, "10.0.0.1", 2000 + i, "10.0.1." + i, 81, A, 100 + i));
            table.entries.add(Entry.of(6, "10.0.0.1", 3000 + i, "10.0.1." + i, 80, A, 200 + i));
        }
        table.entries.add(Entry.of(6, "10.0.0.1", 1000, "10.9.9.9", 81, A, 999)); // no endpoint of ours
        start();
        EnforcedState s1 = state(before.build(), 1);
        judge(null, s1, true);
        int queriesBefore = table.queries.size();
        judge(s1, state(after.build(), 2), false);
        assertThat(table.queries.subList(queriesBefore, table.queries.size()))
                .containsExactly(
                        ConntrackQuery.marked(4, A, FlowMarks.OURS), ConntrackQuery.marked(6, A, FlowMarks.OURS));
        assertThat(observer.cut.get()).isEqualTo(20);
        assertThat(table.markOf(999)).isEqualTo(A);
        for (int i = 0; i < 20; i++) {
            assertThat(table.markOf(100 + i)).isEqualTo(FlowMarks.CUT);
            assertThat(table.markOf(200 + i)).isEqualTo(A);
        }
    }

    @Test
    void ipv6ConnectionsComeFromOneMarkFilteredDumpMatchedHere() throws Exception {
        NodeSnapshot.Builder before = node().addIpSets(set("sa", "10.0.0.1", "fd00::1"))
                .addPolicies(allowFrom("pb", "sa", 80, 81))
                .addEndpoints(endpoint("b", List.of("10.0.0.2", "fd00::2"), "pb"));
        NodeSnapshot.Builder after = node().addIpSets(set("sa", "10.0.0.1", "fd00::1"))
                .addPolicies(allowFrom("pb", "sa", 80))
                .addEndpoints(endpoint("b", List.of("10.0.0.2", "fd00::2"), "pb"));
        table.entries.addAll(List.of(
                Entry.of(6, "fd00::1", 1001, "fd00::2", 81, A, 2),
                Entry.of(6, "fd00::1", 1002, "fd00::2", 80, A, 3),
                Entry.of(6, "fd00::1", 1003, "fd00::99", 81, A, 4)));
        start();
        EnforcedState s1 = state(before.build(), 1);
        judge(null, s1, true);
        int queriesBefore = table.queries.size();
        judge(s1, state(after.build(), 2), false);
        IpAddress b = IpAddress.parse("10.0.0.2");
        assertThat(table.queries.subList(queriesBefore, table.queries.size()))
                .containsExactly(
                        ConntrackQuery.of(b, ConntrackQuery.Match.ORIGINAL_SOURCE, A, FlowMarks.OURS),
                        ConntrackQuery.of(b, ConntrackQuery.Match.REPLY_SOURCE, A, FlowMarks.OURS),
                        ConntrackQuery.marked(6, A, FlowMarks.OURS));
        assertThat(table.markOf(2)).isEqualTo(FlowMarks.CUT);
        assertThat(table.markOf(3)).isEqualTo(A);
        assertThat(table.markOf(4)).as("not b's").isEqualTo(A);
    }

    @Test
    void theDecisionIsTheVerdictFunctionsOnTheTupleAfterDnat() throws Exception {
        // opened to a service address, answered by b:81 (DNAT): judged as 10.0.0.1 -> 10.0.0.2:81
        table.entries.add(new Entry(
                6,
                IpAddress.parse("10.0.0.1"),
                1000,
                IpAddress.parse("10.96.0.1"),
                443,
                IpAddress.parse("10.0.0.2"),
                81,
                A,
                1,
                3));
        start();
        EnforcedState before = state(snapshot(true, 80, 81), 1);
        judge(null, before, true);
        EnforcedState after = state(snapshot(true, 80), 2);
        judge(before, after, false);
        assertThat(cuts).hasSize(1);
        assertThat(cuts.get(0)).startsWith("10.0.0.1 -> 10.0.0.2 proto 6 port 81 from port 1000");
        io.kubeverdict.policy.PacketTuple t = new io.kubeverdict.policy.PacketTuple()
                .set(IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.2"), 6, 81);
        assertThat(Decision.allowed(after.index().decide(t))).isFalse();
    }

    @Test
    void connectionsToAddressesThePodLearnedFromDnsAreJudgedWithWhatItLearned() throws Exception {
        DomainNames api = DomainNames.newBuilder()
                .addPatterns("api.test")
                .setLearnedSetId("d:api")
                .build();
        Rule toApi = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId("egress[0]")
                .addPeers(Peer.newBuilder().setDomainNames(api))
                .addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(443))
                .build();
        ActivePolicy egress = ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier("default").setName("api"))
                .setPolicy(Policy.newBuilder().addOutboundRules(toApi))
                .build();
        WorkloadEndpoint a = WorkloadEndpoint.newBuilder()
                .addIps("10.0.0.1")
                .addDomainWatches(api)
                .addTiers(TierInfo.newBuilder()
                        .setName("default")
                        .setDefaultAction(Action.DENY)
                        .addEgressPolicies("api"))
                .build();
        NodeSnapshot snapshot = node().addPolicies(egress)
                .addEndpoints(Endpoint.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("x").setPod("a"))
                        .setEndpoint(a))
                .build();
        long learnedAddress = IpAddress.parse("192.0.2.10").lo();
        LearnedAddresses learned = (endpoint, set, family, hi, lo) -> family == IpAddress.V4 && lo == learnedAddress;
        table.entries.addAll(List.of(
                Entry.of(6, "10.0.0.1", 1000, "192.0.2.10", 443, A, 1),
                Entry.of(6, "10.0.0.1", 1001, "192.0.2.11", 443, A, 2)));
        start();
        rejudger.changed(null, state(snapshot, 1), true, learned);
        assertThat(rejudger.awaitJudged(10_000)).isTrue();
        assertThat(table.markOf(1)).as("to the address a learned for api.test").isEqualTo(A);
        assertThat(table.markOf(2)).as("to one it did not learn").isEqualTo(FlowMarks.CUT);
    }

    /** Counts what the re-judging reports. */
    static final class Recorder implements RejudgeObserver {
        final AtomicInteger cut = new AtomicInteger();
        final AtomicInteger examined = new AtomicInteger();
        final AtomicInteger vanished = new AtomicInteger();
        final AtomicInteger incomplete = new AtomicInteger();
        final Map<Integer, Integer> dumpErrors = new ConcurrentHashMap<>();
        final Map<Integer, Integer> cutErrors = new ConcurrentHashMap<>();
        final List<Integer> pendingSeen = new CopyOnWriteArrayList<>(new ArrayList<>());
        volatile int lastPending;
        volatile long behindSince = Long.MIN_VALUE;

        @Override
        public void dumped(int entries) {}

        @Override
        public void examined() {
            examined.incrementAndGet();
        }

        @Override
        public void cut(int protocol, long nanosSinceChange) {
            cut.incrementAndGet();
        }

        @Override
        public void vanished() {
            vanished.incrementAndGet();
        }

        @Override
        public void dumpFailed(int errno) {
            dumpErrors.merge(errno, 1, Integer::sum);
        }

        @Override
        public void cutFailed(int errno) {
            cutErrors.merge(errno, 1, Integer::sum);
        }

        @Override
        public void pending(int endpoints) {
            pendingSeen.add(endpoints);
            lastPending = endpoints;
        }

        @Override
        public void behindSince(long nanos) {
            behindSince = nanos;
        }

        @Override
        public void caughtUp() {
            behindSince = Long.MIN_VALUE;
        }

        @Override
        public void passFinished(long nanos, boolean complete) {
            if (!complete) {
                incomplete.incrementAndGet();
            }
        }
    }
}
