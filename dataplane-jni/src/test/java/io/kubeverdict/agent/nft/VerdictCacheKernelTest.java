// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The verdict cache on real packets, with a verdict loop driven directly: a judge that allows port
 * 80 and tags its accepts with a mark the test chooses, and the table's cache whose current tag the
 * test sets as a generation change would.
 */
@KernelTest
class VerdictCacheKernelTest {
    private static final int QUEUE = 31;
    private static final int TAG1 = CacheMarks.mark(1);
    private static final int TAG2 = CacheMarks.mark(2);
    private DpTestbed bed;

    /** Allows port 80, counts what it was asked, tags accepts with {@link #mark}. */
    private static final class TaggingJudge implements Judge {
        final AtomicInteger asked = new AtomicInteger();
        final AtomicInteger mark = new AtomicInteger();
        private int last;

        @Override
        public int decide(PacketTuple p) {
            asked.incrementAndGet();
            boolean allow = p.dstPort == 80;
            last = allow ? mark.get() : 0;
            return allow ? 1 : 0;
        }

        @Override
        public int cacheMark() {
            return last;
        }
    }

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80, 81);
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    private Dataplane cachedTable(int tag) throws Exception {
        return bed.own(Dataplane.cached(
                bed.node, QueuePath.XT_NFQUEUE, QUEUE, Dataplane.BOTH_PODS, CacheSettings.on(60, 1024), tag));
    }

    @Test
    void aRepeatedAllowedConnectionIsAcceptedInTheKernelAndStillMarkedAdmitted() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = cachedTable(TAG1)) {
            dp.listen(judge, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("first tcp4").isTrue();
            assertThat(Probe.tcp(bed.client, SERVER6, 80)).as("first tcp6").isTrue();
            assertThat(Probe.udp(bed.client, SERVER4, 80)).as("first udp4").isTrue();
            int asked = judge.asked.get();
            long queued = dp.queue().received();
            assertThat(dp.cacheCounters().entries()).as("three keys").isEqualTo(3);
            for (int i = 0; i < 20; i++) {
                assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("tcp4 " + i).isTrue();
                assertThat(Probe.tcp(bed.client, SERVER6, 80)).as("tcp6 " + i).isTrue();
            }
            // a UDP probe reuses no source port of the first, so each is a new connection too
            assertThat(Probe.udp(bed.client, SERVER4, 80)).as("udp4 again").isTrue();
            assertThat(judge.asked).as("nothing more was judged").hasValue(asked);
            assertThat(dp.queue().received()).as("nothing more was queued").isEqualTo(queued);
            assertThat(dp.cacheCounters().hits()).isGreaterThanOrEqualTo(41);
            String admitted =
                    bed.node.exec("conntrack", "-L", "-p", "tcp", "--dport", "80", "--mark", "0x08000000/0x08000000");
            assertThat(admitted.lines().filter(l -> l.contains("dport=80")).count())
                    .as("cache hits carry ADMITTED like judged connections:\n%s", admitted)
                    .isGreaterThanOrEqualTo(21);
            String marks = bed.node.exec("nft", "list", "table", "inet", Dataplane.TABLE);
            assertThat(marks).contains("cachetag4").contains("add @cache4");
        }
    }

    @Test
    void withCountersEachKeyCountsTheConnectionsItAccepted() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = bed.own(Dataplane.cached(
                bed.node,
                QueuePath.XT_NFQUEUE,
                QUEUE,
                Dataplane.BOTH_PODS,
                CacheSettings.on(60, 1024).withCounters(true),
                TAG1))) {
            dp.listen(judge, new RecordingObserver(), false);
            for (int i = 0; i < 6; i++) {
                assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("tcp4 " + i).isTrue();
            }
            assertThat(Probe.tcp(bed.client, SERVER6, 80)).as("tcp6").isTrue();
            List<CachedFlows.Flow> flows = dp.cachedFlows();
            assertThat(flows).hasSize(2);
            CachedFlows.Flow v4 = flows.stream()
                    .filter(f -> f.destination().family() == IpAddress.V4)
                    .findFirst()
                    .orElseThrow();
            assertThat(v4.destination()).isEqualTo(IpAddress.parse(SERVER4));
            assertThat(v4.protocol()).isEqualTo(6);
            assertThat(v4.port()).isEqualTo(80);
            // the first connection (judged, its key added) and the five the kernel accepted from the
            // cache; a retransmitted SYN of a slow first round would count once more
            assertThat(v4.connections()).isBetween(6L, 8L);
            assertThat(judge.asked.get()).as("judged: the first of each family").isBetween(2, 4);
        }
        try (Dataplane dp = cachedTable(TAG1)) {
            assertThat(dp.cachedFlows())
                    .as("a cache without counters lists nothing")
                    .isEmpty();
        }
    }

    @Test
    void aPacketThatArrivesWithTagBitsSetBySomeoneElseIsStillJudged() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = cachedTable(TAG1)) {
            dp.listen(judge, new RecordingObserver(), false);
            // Another program of the node sets the current tag's bits on every packet before us.
            bed.node.exec(
                    "nft",
                    "add table inet kvt_marks { chain pre { type filter hook prerouting priority mangle; "
                            + "meta mark set meta mark | " + FlowMarks.hex(TAG1) + "; }; }");
            for (int i = 0; i < 3; i++) {
                assertThat(Probe.tcp(bed.client, SERVER4, 81)).as("denied " + i).isFalse();
            }
            assertThat(judge.asked.get()).as("every attempt judged").isGreaterThanOrEqualTo(3);
            int asked = judge.asked.get();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("allowed").isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("allowed again").isTrue();
            assertThat(judge.asked.get() - asked)
                    .as("someone else's bits are not a tag: accepted untagged, judged each time")
                    .isEqualTo(2);
            assertThat(dp.cacheCounters().entries()).isZero();
        }
    }

    @Test
    void deniesAndUntaggedAcceptsAreNotCached() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        try (Dataplane dp = cachedTable(TAG1)) {
            dp.listen(judge, new RecordingObserver(), false);
            for (int i = 0; i < 3; i++) {
                assertThat(Probe.tcp(bed.client, SERVER4, 81)).as("denied " + i).isFalse();
            }
            int afterDenies = judge.asked.get();
            assertThat(afterDenies).as("every denied attempt judged").isGreaterThanOrEqualTo(3);
            for (int i = 0; i < 3; i++) {
                assertThat(Probe.tcp(bed.client, SERVER4, 80))
                        .as("untagged allow " + i)
                        .isTrue();
            }
            assertThat(judge.asked.get() - afterDenies)
                    .as("an accept without a tag is judged each time")
                    .isEqualTo(3);
            assertThat(dp.cacheCounters().entries()).isZero();
        }
    }

    @Test
    void aNewGenerationEmptiesTheCacheAndAnOlderTagCannotFillItAgain() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = cachedTable(TAG1)) {
            dp.listen(judge, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("cached under tag 1").hasValue(1);

            // The next generation: cache emptied, tag 2 current. The judge still tags with 1, as a
            // verdict decided by the older generation would arrive after the change.
            dp.update(Dataplane.BOTH_PODS, TAG2);
            assertThat(dp.cacheCounters().entries())
                    .as("emptied with the change")
                    .isZero();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("judged again after the change").hasValue(2);
            assertThat(dp.cacheCounters().entries())
                    .as("a packet with the older tag added nothing")
                    .isZero();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("still judged: nothing cached").hasValue(3);

            judge.mark.set(TAG2); // judged by the current generation
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).hasValue(4);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("cached under tag 2").hasValue(4);

            dp.update(Dataplane.BOTH_PODS, 0); // a generation that may cache nothing
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("no tag current: judged each time").hasValue(6);
            assertThat(dp.cacheCounters().entries()).isZero();
        }
    }

    @Test
    void theTagBitsNeverLeaveTheHookAndOtherMarkBitsStay() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = cachedTable(TAG1)) {
            // The mark as the packet leaves: rules of a later priority record in the ct mark whether it
            // still has its own bit 0x40 (ct mark 0x40) and whether it still has tag bits (0x80).
            bed.node.exec(
                    "nft",
                    "add table inet kvt_seen; add chain inet kvt_seen c { type filter hook forward priority 10; }; "
                            + "add chain inet kvt_seen pre { type filter hook prerouting priority -150; }; "
                            + "add rule inet kvt_seen pre ct state new tcp dport 80 meta mark set 0x00000040; "
                            + "add rule inet kvt_seen c ct state new tcp dport 80 meta mark 0x00000040 "
                            + "ct mark set ct mark | 0x00000040; "
                            + "add rule inet kvt_seen c ct state new tcp dport 80 meta mark & 0x00003000 != 0 "
                            + "ct mark set ct mark | 0x00000080");
            try {
                dp.listen(judge, new RecordingObserver(), false);
                assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
                assertThat(dp.cacheCounters().entries()).as("tagged and cached").isEqualTo(1);
                String entries = bed.node.exec("conntrack", "-L", "-p", "tcp", "--dport", "80");
                assertThat(entries)
                        .as("the packet left with its own mark bit and without the tag:\n%s", entries)
                        .contains("mark=134217792"); // ADMITTED | 0x40
            } finally {
                bed.node.exec("nft", "delete", "table", "inet", "kvt_seen");
            }
        }
    }

    @Test
    void aCacheWhoseAgentStoppedRenewingItStopsAnswering() throws Exception {
        TaggingJudge judge = new TaggingJudge();
        judge.mark.set(TAG1);
        try (Dataplane dp = cachedTable(TAG1)) {
            dp.listen(judge, new RecordingObserver(), false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(judge.asked).as("cached").hasValue(1);

            dp.stopHeartbeat(); // as a killed agent: its liveness elements expire
            long deadline = System.nanoTime() + 30_000_000_000L;
            int before = judge.asked.get();
            while (judge.asked.get() == before && System.nanoTime() < deadline) {
                assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
                Thread.sleep(200);
            }
            assertThat(judge.asked.get())
                    .as("once the liveness expired, the key's connections go to the queue again")
                    .isGreaterThan(before);
            assertThat(dp.cacheCounters().entries())
                    .as("the key is still there: it is the liveness, not the key, that stops it")
                    .isEqualTo(1);
            dp.stopListening(); // no listener and fail-closed: the key's connections are dropped now
            assertThat(Probe.tcp(bed.client, SERVER4, 80))
                    .as("dead agent, fail-closed")
                    .isFalse();
        }
    }
}
