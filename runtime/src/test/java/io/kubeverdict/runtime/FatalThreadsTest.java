// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FatalThreadsTest {
    @Test
    void anErrorEscapingAWorkerFailsHealthAndExitsOnce() throws Exception {
        try (FatalThreads.Observed observed = FatalThreads.observeForTest()) {
            assertThat(FatalThreads.healthy()).isTrue();
            Thread t = FatalThreads.worker("verdict-loop-q7", () -> {
                throw new AssertionError("boom");
            });
            t.start();
            t.join(30_000);
            Thread second = FatalThreads.worker("dns-loop-q1", () -> {
                throw new StackOverflowError();
            });
            second.start();
            second.join(30_000);

            assertThat(FatalThreads.healthy()).isFalse();
            assertThat(FatalThreads.death()).contains("verdict-loop-q7").contains("AssertionError: boom");
            assertThat(observed.exitCodes()).containsExactly(FatalThreads.EXIT_CODE);
        }
        assertThat(FatalThreads.healthy()).isTrue();
    }

    @Test
    void aLoopThatReturnsIsNotADeath() throws Exception {
        try (FatalThreads.Observed observed = FatalThreads.observeForTest()) {
            Thread t = FatalThreads.worker("kv-sync", () -> {});
            t.start();
            t.join(30_000);
            assertThat(FatalThreads.healthy()).isTrue();
            assertThat(observed.exitCodes()).isEmpty();
        }
    }
}
