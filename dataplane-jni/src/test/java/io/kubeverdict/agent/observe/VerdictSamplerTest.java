// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class VerdictSamplerTest {
    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final Random random = new Random(42);

    private int admittedOf(VerdictSampler s, int arrivals) {
        int admitted = 0;
        long step = 1_000_000_000L / arrivals;
        for (int i = 0; i < arrivals; i++) {
            admitted += s.admit() ? 1 : 0;
            now.addAndGet(step);
        }
        return admitted;
    }

    @Test
    void belowTheRateEverythingPasses() {
        VerdictSampler s = new VerdictSampler(100, now::get, random::nextDouble);
        assertThat(admittedOf(s, 50)).isEqualTo(50);
        assertThat(admittedOf(s, 100)).isEqualTo(100);
    }

    @Test
    void aboveTheRateAtMostTheRatePassesSpreadOverTheSecond() {
        VerdictSampler s = new VerdictSampler(100, now::get, random::nextDouble);
        assertThat(admittedOf(s, 1000)).as("first second: the first 100").isEqualTo(100);
        // Sustained load: sampled with probability 100/1000, capped at 100, and not just the first ones.
        int[] halves = new int[2];
        for (int i = 0; i < 1000; i++) {
            if (s.admit()) {
                halves[i < 500 ? 0 : 1]++;
            }
            now.addAndGet(1_000_000L);
        }
        assertThat(halves[0] + halves[1]).isBetween(60, 100);
        assertThat(halves[1]).as("the second half of the second gets its share").isGreaterThan(20);
    }

    @Test
    void afterAQuietSpellTheRateIsWholeAgain() {
        VerdictSampler s = new VerdictSampler(10, now::get, random::nextDouble);
        admittedOf(s, 1000);
        now.addAndGet(5_000_000_000L);
        assertThat(admittedOf(s, 10)).isEqualTo(10);
    }
}
