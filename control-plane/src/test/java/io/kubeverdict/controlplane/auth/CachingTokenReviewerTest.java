// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CachingTokenReviewerTest {
    private final AtomicLong nanos = new AtomicLong(1_000);
    private final AtomicLong unixSeconds = new AtomicLong(1_700_000_000L);
    private final AtomicInteger calls = new AtomicInteger();

    private static String jwt(long exp) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(
                        ("{\"exp\":" + exp + ",\"aud\":[\"kube-verdict\"]}").getBytes(StandardCharsets.UTF_8))
                + ".signature";
    }

    private CachingTokenReviewer reviewer(Review answer) {
        return new CachingTokenReviewer(
                t -> {
                    calls.incrementAndGet();
                    return answer;
                },
                nanos::get,
                unixSeconds::get);
    }

    @Test
    void anAcceptedTokenIsTrustedBrieflyAndNeverPastItsExpiry() {
        CachingTokenReviewer r = reviewer(Review.authenticated("u", List.of(), Map.of()));
        String longLived = jwt(unixSeconds.get() + 3600);
        r.review(longLived);
        nanos.addAndGet(CachingTokenReviewer.ACCEPTED_FOR_NANOS - 1);
        r.review(longLived);
        assertThat(calls).hasValue(1);
        nanos.addAndGet(1);
        r.review(longLived);
        assertThat(calls).as("reviewed again after the cache time").hasValue(2);

        String expiresSoon = jwt(unixSeconds.get() + 2);
        r.review(expiresSoon);
        nanos.addAndGet(2_000_000_000L);
        r.review(expiresSoon);
        assertThat(calls).as("the exp claim ends the cache time").hasValue(4);
    }

    @Test
    void rejectionsAreKeptShorterAndApiFailuresNotAtAll() {
        CachingTokenReviewer rejecting = reviewer(Review.rejected("no"));
        rejecting.review("x");
        rejecting.review("x");
        assertThat(calls).hasValue(1);
        nanos.addAndGet(CachingTokenReviewer.REJECTED_FOR_NANOS);
        rejecting.review("x");
        assertThat(calls).hasValue(2);

        calls.set(0);
        CachingTokenReviewer failing = reviewer(Review.failed("API down"));
        failing.review("y");
        failing.review("y");
        assertThat(calls).hasValue(2);
    }

    @Test
    void garbageCannotGrowTheCache() {
        CachingTokenReviewer r = reviewer(Review.rejected("no"));
        for (int i = 0; i < CachingTokenReviewer.MAX_ENTRIES + 500; i++) {
            r.review("garbage-" + i);
        }
        assertThat(r.size()).isEqualTo(CachingTokenReviewer.MAX_ENTRIES);
        nanos.addAndGet(CachingTokenReviewer.REJECTED_FOR_NANOS);
        r.review("after-expiry");
        assertThat(r.size()).as("expired entries make room").isEqualTo(1);
    }
}
