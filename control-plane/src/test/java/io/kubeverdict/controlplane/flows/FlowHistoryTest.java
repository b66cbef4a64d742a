// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.proto.v1.Verdict;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FlowHistoryTest {
    private static final long MIN = 60_000;

    static FlowKey key(String from, String to, int port, Verdict verdict) {
        return new FlowKey(
                new FlowKey.Side("x", from, Map.of("app", from), ""),
                new FlowKey.Side("x", to, Map.of("app", to), ""),
                6,
                port,
                verdict,
                "ingress",
                "default",
                "x/allow",
                "ingress[0]",
                "ingress x/allow ingress[0]");
    }

    static FlowHistory.Observation seen(FlowKey k, long t) {
        return new FlowHistory.Observation(k, t, "x/" + k.source().workload() + "-0", "10.0.0.1", "", "10.0.0.2");
    }

    private static FlowHistory history(int maxRecords, long maxBytes) {
        return new FlowHistory(
                new FlowHistory.Limits(Duration.ofMinutes(10), Duration.ofMinutes(1), maxRecords, maxBytes));
    }

    @Test
    void anEventAnAgentCountedSeveralVerdictsIntoCountsThemAll() {
        FlowHistory h = history(100, 1 << 20);
        FlowKey k = key("a", "b", 80, Verdict.VERDICT_DENY);
        long now = 100 * MIN;
        h.record(seen(k, now - 1), 37, now);
        h.record(seen(k, now - 1), 0, now); // an older agent's event: one verdict
        assertThat(h.held()).extracting(FlowHistory.Held::count).containsExactly(38L);
    }

    @Test
    void aVerdictAtABucketsStartIsInThatBucketAndOneBeforeIsInThePreviousOne() {
        FlowHistory h = history(100, 1 << 20);
        FlowKey k = key("a", "b", 80, Verdict.VERDICT_ALLOW);
        long now = 100 * MIN;
        h.record(seen(k, 99 * MIN - 1), now);
        h.record(seen(k, 99 * MIN), now);
        h.record(seen(k, 99 * MIN + MIN - 1), now);
        assertThat(h.held())
                .extracting(FlowHistory.Held::bucketStart, FlowHistory.Held::count)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(98 * MIN, 1L),
                        org.assertj.core.groups.Tuple.tuple(99 * MIN, 2L));
        FlowHistory.Held merged = h.merged(x -> true, 0).get(0);
        assertThat(merged.count()).isEqualTo(3);
        assertThat(merged.firstSeen()).isEqualTo(99 * MIN - 1);
        assertThat(merged.lastSeen()).isEqualTo(99 * MIN + MIN - 1);
    }

    @Test
    void aBucketLeavesWhenItsEndIsOlderThanTheWindow() {
        FlowHistory h = history(100, 1 << 20);
        FlowKey k = key("a", "b", 80, Verdict.VERDICT_ALLOW);
        h.record(seen(k, 0), 0); // bucket [0, 1m)
        h.expire(11 * MIN - 1); // the window starts 1ms before the bucket's end: still in it
        assertThat(h.records()).isEqualTo(1);
        h.expire(11 * MIN); // window starts at 1m: the bucket ended at 1m
        assertThat(h.records()).isZero();
        assertThat(h.expired()).isEqualTo(1);
        assertThat(h.approximateBytes()).isZero();
    }

    @Test
    void timesFromTheFutureOrBeforeTheWindowAreClampedIntoIt() {
        FlowHistory h = history(100, 1 << 20);
        long now = 100 * MIN;
        h.record(seen(key("a", "b", 80, Verdict.VERDICT_ALLOW), now + 50 * MIN), now);
        h.record(seen(key("a", "b", 81, Verdict.VERDICT_ALLOW), 0), now);
        assertThat(h.held()).extracting(FlowHistory.Held::bucketStart).containsExactly(90 * MIN, 100 * MIN);
    }

    @Test
    void overTheRecordCapTheOldestBucketIsEvictedFirst() {
        FlowHistory h = history(2, 1 << 20);
        long now = 100 * MIN;
        h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now - 2 * MIN), now);
        h.record(seen(key("a", "b", 2, Verdict.VERDICT_ALLOW), now - MIN), now);
        h.record(seen(key("a", "b", 3, Verdict.VERDICT_ALLOW), now), now);
        assertThat(h.held()).extracting(x -> x.key().port()).containsExactly(2, 3);
        assertThat(h.evicted()).isEqualTo(1);
        assertThat(h.dropped()).isZero();
    }

    @Test
    void aNewFlowThatDoesNotFitBesideItsOwnBucketIsDroppedButKnownFlowsKeepCounting() {
        FlowHistory h = history(2, 1 << 20);
        long now = 100 * MIN;
        h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now), now);
        h.record(seen(key("a", "b", 2, Verdict.VERDICT_ALLOW), now), now);
        assertThat(h.record(seen(key("a", "b", 3, Verdict.VERDICT_ALLOW), now), now))
                .isFalse();
        assertThat(h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now), now))
                .isTrue();
        assertThat(h.dropped()).isEqualTo(1);
        assertThat(h.records()).isEqualTo(2);
        assertThat(h.merged(x -> x.port() == 1, 0).get(0).count()).isEqualTo(2);
    }

    @Test
    void theByteCapEvictsLikeTheRecordCap() {
        FlowKey k1 = key("a", "b", 1, Verdict.VERDICT_ALLOW);
        long one = 160 + k1.approximateBytes();
        FlowHistory h = history(1000, 2 * one + one / 2);
        long now = 100 * MIN;
        h.record(seen(k1, now - 2 * MIN), now);
        h.record(seen(key("a", "b", 2, Verdict.VERDICT_ALLOW), now - MIN), now);
        h.record(seen(key("a", "b", 3, Verdict.VERDICT_ALLOW), now), now);
        assertThat(h.records()).isEqualTo(2);
        assertThat(h.approximateBytes()).isLessThanOrEqualTo(2 * one + one / 2);
        assertThat(h.evicted()).isEqualTo(1);
    }

    @Test
    void mergedFiltersBySinceAndOrdersMostSeenFirst() {
        FlowHistory h = history(100, 1 << 20);
        long now = 100 * MIN;
        FlowKey old = key("a", "b", 1, Verdict.VERDICT_ALLOW);
        FlowKey busy = key("a", "c", 2, Verdict.VERDICT_DENY);
        h.record(seen(old, now - 5 * MIN), now);
        h.record(seen(busy, now - MIN), now);
        h.record(seen(busy, now), now);
        assertThat(h.merged(x -> true, 0)).extracting(FlowHistory.Held::key).containsExactly(busy, old);
        assertThat(h.merged(x -> true, now - 2 * MIN))
                .extracting(FlowHistory.Held::key)
                .containsExactly(busy);
    }

    @Test
    void restoredRecordsKeepTheirBucketsAndCountsAndOldOnesAreLeftOut() {
        FlowHistory h = history(100, 1 << 20);
        long now = 100 * MIN;
        h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now - MIN), now);
        h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now - MIN), now);
        List<FlowHistory.Held> written = h.held();
        FlowHistory again = history(100, 1 << 20);
        assertThat(again.restore(written.get(0), now + MIN)).isTrue();
        assertThat(again.held()).isEqualTo(written);
        FlowHistory later = history(100, 1 << 20);
        assertThat(later.restore(written.get(0), now + 20 * MIN)).isFalse();
        assertThat(later.records()).isZero();
    }

    @Test
    void endedBucketsAreHandedOutOnceAndALateVerdictAgainWithItsOwnCount() {
        FlowHistory h = history(100, 1 << 20);
        FlowKey k = key("a", "b", 80, Verdict.VERDICT_ALLOW);
        long now = 100 * MIN;
        h.record(seen(k, 98 * MIN + 5), now);
        h.record(seen(k, 98 * MIN + 7), now);
        h.record(seen(k, 99 * MIN + 1), now); // the bucket [99, 100) has not ended by 99 min + 59 s
        List<FlowHistory.Held> first = h.unexported(100 * MIN - 1);
        assertThat(first)
                .extracting(FlowHistory.Held::bucketStart, FlowHistory.Held::count, FlowHistory.Held::firstSeen)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(98 * MIN, 2L, 98 * MIN + 5));
        assertThat(h.unexported(100 * MIN - 1)).isEmpty();
        h.record(seen(k, 98 * MIN + 9), now); // late, into the bucket handed out
        assertThat(h.unexported(100 * MIN))
                .extracting(FlowHistory.Held::bucketStart, FlowHistory.Held::count)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(98 * MIN, 1L),
                        org.assertj.core.groups.Tuple.tuple(99 * MIN, 1L));
        assertThat(h.held()).extracting(FlowHistory.Held::count).containsExactly(3L, 1L);
    }

    @Test
    void aBucketChangedAfterItWasHandedOutAndThenExpiredIsNotHandedOutAgain() {
        FlowHistory h = history(100, 1 << 20);
        FlowKey k = key("a", "b", 80, Verdict.VERDICT_ALLOW);
        long now = 100 * MIN;
        h.record(seen(k, 91 * MIN), now);
        assertThat(h.unexported(now)).hasSize(1);
        h.record(seen(k, 91 * MIN + 1), now); // late
        h.expire(102 * MIN); // the window (10 min) leaves [91, 92) behind
        assertThat(h.unexported(102 * MIN)).isEmpty();
        h.record(seen(k, 101 * MIN), 102 * MIN);
        assertThat(h.unexported(102 * MIN))
                .extracting(FlowHistory.Held::bucketStart)
                .containsExactly(101 * MIN);
    }

    @Test
    void restoredRecordsCountAsHandedOut() {
        FlowHistory h = history(100, 1 << 20);
        long now = 100 * MIN;
        h.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now - 2 * MIN), now);
        FlowHistory again = history(100, 1 << 20);
        assertThat(again.restore(h.held().get(0), now)).isTrue();
        assertThat(again.unexported(Long.MAX_VALUE)).isEmpty();
        again.record(seen(key("a", "b", 1, Verdict.VERDICT_ALLOW), now - 2 * MIN), now);
        assertThat(again.unexported(Long.MAX_VALUE))
                .extracting(FlowHistory.Held::count)
                .containsExactly(1L);
    }

    @Test
    void limitsRefuseABucketWiderThanTheWindow() {
        assertThatThrownBy(() -> new FlowHistory.Limits(Duration.ofMinutes(1), Duration.ofMinutes(2), 1, 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
