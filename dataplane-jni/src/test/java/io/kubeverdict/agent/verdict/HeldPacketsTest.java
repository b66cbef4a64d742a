// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.verdict.HeldPackets.Outcome;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HeldPacketsTest {
    private static final long SECOND = 1_000_000_000L;

    record Answered(int id, boolean accept, Outcome outcome) {}

    private final List<Answered> answered = new ArrayList<>();
    private final HeldPackets.Answer answer =
            (id, accept, outcome, held) -> answered.add(new Answered(id, accept, outcome));

    private static PacketTuple to(int port) {
        return new PacketTuple().set(IpAddress.parse("10.0.0.9"), IpAddress.parse("10.0.0.1"), 6, port);
    }

    @Test
    void heldPacketsWaitWhileTheJudgeHoldsThenGetItsVerdict() {
        HeldPackets held = new HeldPackets(8, 2 * SECOND, false);
        held.hold(1, to(80), 0, answer);
        held.hold(2, to(81), 0, answer);
        held.resolve(t -> Judge.HOLD, SECOND, answer);
        assertThat(answered).isEmpty();
        assertThat(held.size()).isEqualTo(2);
        // A state that knows the address: port 80 allowed (odd code), 81 denied (even code).
        held.resolve(t -> t.dstPort == 80 ? 1 : 0, SECOND, answer);
        assertThat(answered)
                .containsExactly(new Answered(1, true, Outcome.ALLOWED), new Answered(2, false, Outcome.DENIED));
        assertThat(held.size()).isZero();
    }

    @Test
    void pastTheBoundTheyGetTheTimeoutVerdictOfTheMode() {
        for (boolean failOpen : new boolean[] {false, true}) {
            answered.clear();
            HeldPackets held = new HeldPackets(8, 2 * SECOND, failOpen);
            held.hold(1, to(80), 0, answer);
            held.hold(2, to(80), SECOND, answer);
            held.resolve(t -> Judge.HOLD, 2 * SECOND + 1, answer);
            assertThat(answered).containsExactly(new Answered(1, failOpen, Outcome.TIMED_OUT));
            assertThat(held.size()).isEqualTo(1);
            held.resolve(t -> Judge.HOLD, 3 * SECOND + 1, answer);
            assertThat(answered).hasSize(2);
        }
    }

    @Test
    void whenFullTheOldestIsAnsweredAndAJudgeThatThrowsKeepsThemHeld() {
        HeldPackets held = new HeldPackets(2, 2 * SECOND, false);
        held.hold(1, to(80), 0, answer);
        held.hold(2, to(81), 1, answer);
        held.hold(3, to(82), 2, answer);
        assertThat(answered).containsExactly(new Answered(1, false, Outcome.OVERFLOW));
        held.resolve(
                t -> {
                    throw new IllegalStateException("a bug");
                },
                3,
                answer);
        assertThat(held.size()).isEqualTo(2);
        held.resolve(t -> t.dstPort == 82 ? 1 : Judge.HOLD, 4, answer);
        assertThat(answered).contains(new Answered(3, true, Outcome.ALLOWED));
        assertThat(held.size()).isEqualTo(1);
    }
}
