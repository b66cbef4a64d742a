// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SendPaceTest {
    private static final long MS = 1_000_000L;
    private final SendPace pace = new SendPace(256);

    @Test
    void whileSomeoneWatchesLiveEveryTickSends() {
        pace.demand(false);
        for (long t = 0; t < 1000 * MS; t += SendPace.TICK_MILLIS * MS) {
            assertThat(pace.due(t, 1)).as("tick at %d ms", t / MS).isTrue();
            pace.flushed(t);
        }
    }

    @Test
    void forTheHistoryAloneOnceASecondOrWhenABatchIsFull() {
        pace.demand(true);
        assertThat(pace.due(0, 1)).as("the first tick").isTrue();
        pace.flushed(0);
        for (long t = 100 * MS; t < 1000 * MS; t += 100 * MS) {
            assertThat(pace.due(t, 255))
                    .as("tick at %d ms, less than a batch", t / MS)
                    .isFalse();
        }
        assertThat(pace.due(500 * MS, 256)).as("a full batch").isTrue();
        assertThat(pace.due(1000 * MS, 1)).as("a second after the last").isTrue();
    }

    @Test
    void aLiveObserverArrivingSendsAtTheNextTick() {
        pace.demand(true);
        pace.flushed(0);
        assertThat(pace.due(100 * MS, 1)).isFalse();
        pace.demand(false);
        assertThat(pace.due(100 * MS, 1)).isTrue();
    }
}
