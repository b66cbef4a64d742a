package io.kubeverdict.agent.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), 2.0, 0.2);

    @Test
    void growsExponentiallyUpToTheCap() {
        assertThat(backoff.delay(0, 0.5)).isEqualTo(Duration.ofMillis(100));
        assertThat(backoff.delay(1, 0.5)).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.delay(3, 0.5)).isEqualTo(Duration.ofMillis(800));
        assertThat(backoff.delay(6, 0.5)).isEqualTo(Duration.ofSeconds(5));
        assertThat(backoff.delay(60, 0.5)).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void jitterSpreadsWithinTheBand() {
        assertThat(backoff.delay(2, 0.0)).isEqualTo(Duration.ofMillis(320));
        assertThat(backoff.delay(2, 0.999999)).isEqualTo(Duration.ofMillis(480));
        assertThat(backoff.delay(60, 0.0)).isEqualTo(Duration.ofSeconds(4));
    }

    @Test
    void rejectsNonsense() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), 2, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 2, 1.0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
