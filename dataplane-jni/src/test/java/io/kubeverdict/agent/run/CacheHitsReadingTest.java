// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CacheHitsReadingTest {
    @Test
    void aLongReadingIsFollowedByALongerWaitSoThatReadingTakesAtMostAShareOfACpu() {
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        assertThat(CacheHitsReading.nextDelayNanos(20 * ms)).isEqualTo(CacheHitsReading.MIN_PERIOD_NANOS);
        assertThat(CacheHitsReading.nextDelayNanos(2500 * ms)).isEqualTo(50_000 * ms);
        assertThat(CacheHitsReading.nextDelayNanos(-5)).isEqualTo(CacheHitsReading.MIN_PERIOD_NANOS);
    }
}
