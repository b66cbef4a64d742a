// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0);

    @Test
    void theBandGrowsExponentiallyUpToTheCap() {
        assertThat(backoff.bound(0)).isEqualTo(Duration.ofMillis(100));
        assertThat(backoff.bound(1)).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.bound(3)).isEqualTo(Duration.ofMillis(800));
        assertThat(backoff.bound(4)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.bound(60)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.bound(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void fullJitterPicksAnywhereInTheBand() {
        assertThat(backoff.delay(2, 0.0)).isEqualTo(Duration.ofMillis(1));
        assertThat(backoff.delay(2, 0.5)).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.delay(2, 0.999999)).isEqualTo(Duration.ofMillis(400));
        assertThat(backoff.delay(60, 0.25)).isEqualTo(Duration.ofMillis(250));
        assertThat(backoff.delay(60, 0.999999)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void theDefaultNoticesAReturnWithinASecond() {
        assertThat(Backoff.DEFAULT.bound(1000)).isLessThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(Backoff.DEFAULT.delay(1000, 0.999999)).isLessThanOrEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void rejectsNonsense() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 0.5))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
