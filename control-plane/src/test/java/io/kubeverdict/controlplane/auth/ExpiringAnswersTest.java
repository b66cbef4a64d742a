// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ExpiringAnswersTest {
    private final AtomicLong nanos = new AtomicLong(1_000);
    private final ExpiringAnswers<String> answers = new ExpiringAnswers<>(3, nanos::get);

    @Test
    void keptUntilItsOwnExpiry() {
        answers.put("a", "yes", 10);
        answers.put("b", "no", 20);
        nanos.addAndGet(9);
        assertThat(answers.get("a")).isEqualTo("yes");
        nanos.addAndGet(1);
        assertThat(answers.get("a")).isNull();
        assertThat(answers.get("b")).isEqualTo("no");
    }

    @Test
    void nothingKeptForNoTimeAndForeverDoesNotWrap() {
        answers.put("never", "x", 0);
        answers.put("forever", "y", Long.MAX_VALUE);
        nanos.set(Long.MAX_VALUE - 10);
        assertThat(answers.get("never")).isNull();
        assertThat(answers.get("forever")).isEqualTo("y");
    }

    @Test
    void fullOfLiveAnswersKeepsNoMoreAndExpiredOnesMakeRoom() {
        answers.put("a", "1", 10);
        answers.put("b", "2", 10);
        answers.put("c", "3", 100);
        answers.put("d", "4", 100);
        assertThat(answers.size()).isEqualTo(3);
        assertThat(answers.get("d")).isNull();
        nanos.addAndGet(10);
        answers.put("d", "4", 100);
        assertThat(answers.size()).isEqualTo(2);
        assertThat(answers.get("c")).isEqualTo("3");
        assertThat(answers.get("d")).isEqualTo("4");
    }
}
