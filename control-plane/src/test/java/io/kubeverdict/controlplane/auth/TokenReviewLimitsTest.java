// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TokenReviewLimitsTest {
    private final AtomicLong nanos = new AtomicLong(1_000);

    @Test
    void eachAddressHasItsOwnBudgetThatRefills() {
        TokenReviewLimits limits = new TokenReviewLimits(new TokenReviewLimits.Config(2, 3, 100, 10), nanos::get);
        for (int i = 0; i < 3; i++) {
            assertThat(limits.tryStart("10.0.0.1")).isNull();
            limits.finished();
        }
        TokenReviewLimits.Refusal over = limits.tryStart("10.0.0.1");
        assertThat(over.reason()).isEqualTo("token_reviews_per_address");
        assertThat(over.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(limits.tryStart("10.0.0.2")).as("another address").isNull();
        limits.finished();
        nanos.addAndGet(500_000_000L); // half a second: one more at 2 per second
        assertThat(limits.tryStart("10.0.0.1")).isNull();
        limits.finished();
        assertThat(limits.tryStart("10.0.0.1")).isNotNull();
    }

    @Test
    void reviewsInFlightAreCappedOverAllAddresses() {
        TokenReviewLimits limits = new TokenReviewLimits(new TokenReviewLimits.Config(100, 100, 2, 10), nanos::get);
        assertThat(limits.tryStart("10.0.0.1")).isNull();
        assertThat(limits.tryStart("10.0.0.2")).isNull();
        TokenReviewLimits.Refusal busy = limits.tryStart("10.0.0.3");
        assertThat(busy.reason()).isEqualTo("token_reviews_in_flight");
        assertThat(busy.code()).isEqualTo(Status.Code.UNAVAILABLE);
        limits.finished();
        assertThat(limits.tryStart("10.0.0.3")).isNull();
    }

    @Test
    void aFloodOfAddressesSharesOneBudgetBeyondTheTable() {
        TokenReviewLimits limits = new TokenReviewLimits(new TokenReviewLimits.Config(1, 1, 100, 2), nanos::get);
        int allowed = 0;
        for (int i = 0; i < 100; i++) {
            if (limits.tryStart("10.0.1." + i) == null) {
                allowed++;
                limits.finished();
            }
        }
        assertThat(allowed).as("two tracked addresses and one shared budget").isEqualTo(3);
    }
}
