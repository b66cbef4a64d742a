// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The fault suite's judge without packets: which verdicts an epoch, a window and a span of epochs accept. */
class ExpectationTimelineTest {
    static final List<String> PODS = List.of("a", "b", "c");
    /** a -> b allowed, a -> c allowed, the rest denied. */
    static final Verdicts BEFORE =
            new Verdicts("before", PODS, Set.of(Verdicts.pair("a", "b"), Verdicts.pair("a", "c")));
    /** a -> b denied now, c -> a allowed now. */
    static final Verdicts AFTER = new Verdicts("after", PODS, Set.of(Verdicts.pair("a", "c"), Verdicts.pair("c", "a")));

    @Test
    void aSteadyEpochAcceptsExactlyItsVerdict() {
        ExpectationTimeline t = new ExpectationTimeline("before", BEFORE);
        assertThat(t.accepted(0, 0, "a", "b")).containsExactly(true);
        assertThat(t.accepted(0, 0, "b", "a")).containsExactly(false);
    }

    @Test
    void aWindowAcceptsBothSidesOnlyWhereTheyDiffer() {
        ExpectationTimeline t = new ExpectationTimeline("before", BEFORE);
        int window = t.enter("window", BEFORE, AFTER);
        assertThat(t.accepted(window, window, "a", "b")).containsExactlyInAnyOrder(true, false);
        assertThat(t.accepted(window, window, "c", "a")).containsExactlyInAnyOrder(true, false);
        assertThat(t.accepted(window, window, "a", "c")).as("both allow it").containsExactly(true);
        assertThat(t.accepted(window, window, "b", "c")).as("both deny it").containsExactly(false);
    }

    @Test
    void anObservationIsJudgedByEveryEpochItOverlapped() {
        ExpectationTimeline t = new ExpectationTimeline("before", BEFORE);
        int after = t.enter("after", AFTER);
        assertThat(t.accepted(after, after, "a", "b")).containsExactly(false);
        assertThat(t.accepted(0, after, "a", "b")).containsExactlyInAnyOrder(true, false);
        assertThat(t.current()).isEqualTo(after);
    }

    @Test
    void theJudgeNamesWhatOpenedWronglyAndWhatDidNotOpen() {
        ExpectationTimeline t = new ExpectationTimeline("before", BEFORE);
        // Observed: b -> a opened (denied before), a -> b did not open (allowed before), a -> c opened (fine).
        Set<String> seen = Set.of(Verdicts.pair("b", "a"), Verdicts.pair("a", "c"));
        ContinuousProber.Judgement j =
                ContinuousProber.judge(t, 0, 0, PODS, (f, to) -> seen.contains(Verdicts.pair(f, to)));
        assertThat(j.opened()).containsExactly(new String[] {"b", "a"});
        assertThat(j.notOpened()).containsExactly(new String[] {"a", "b"});
        ContinuousProber.Judgement exact = ContinuousProber.judge(t, 0, 0, PODS, BEFORE::allowed);
        assertThat(exact.opened()).isEmpty();
        assertThat(exact.notOpened()).isEmpty();
    }
}
