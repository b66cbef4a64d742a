// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.function.LongSupplier;

/**
 * Remembers reviews briefly, keyed by the token's SHA-256 (the token itself is not kept): an agent
 * calls ReportApplied after every applied change, and a fleet reconnecting must not become a
 * TokenReview storm. An accepted token is trusted for at most {@link #ACCEPTED_FOR_NANOS} and never
 * past its own {@code exp} claim (read unverified, only to shorten that); a rejection is kept
 * shorter, an API failure not at all. At most {@link #MAX_ENTRIES} are kept, so garbage tokens
 * cannot grow memory.
 */
public final class CachingTokenReviewer implements TokenReviewer {
    static final long ACCEPTED_FOR_NANOS = 30_000_000_000L;
    static final long REJECTED_FOR_NANOS = 5_000_000_000L;
    static final int MAX_ENTRIES = 10_000;

    private final TokenReviewer reviewer;
    private final LongSupplier unixSeconds;
    private final ExpiringAnswers<Review> answers;

    public CachingTokenReviewer(TokenReviewer reviewer) {
        this(reviewer, System::nanoTime, () -> System.currentTimeMillis() / 1000);
    }

    CachingTokenReviewer(TokenReviewer reviewer, LongSupplier nanoTime, LongSupplier unixSeconds) {
        this.reviewer = reviewer;
        this.unixSeconds = unixSeconds;
        this.answers = new ExpiringAnswers<>(MAX_ENTRIES, nanoTime);
    }

    /** The kept answer for {@code token}, or null when it must be asked (and would cost a review). */
    public Review kept(String token) {
        return answers.get(sha256(token));
    }

    @Override
    public Review review(String token) {
        String key = sha256(token);
        Review kept = answers.get(key);
        if (kept != null) {
            return kept;
        }
        Review review = reviewer.review(token);
        if (!review.apiFailure()) {
            answers.put(
                    key, review, review.ok() ? Math.min(ACCEPTED_FOR_NANOS, untilExpiry(token)) : REJECTED_FOR_NANOS);
        }
        return review;
    }

    int size() {
        return answers.size();
    }

    /** Nanoseconds until the JWT's exp claim; unbounded when the token has none we can read. */
    private long untilExpiry(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            return Long.MAX_VALUE;
        }
        try {
            Struct.Builder claims = Struct.newBuilder();
            JsonFormat.parser()
                    .ignoringUnknownFields()
                    .merge(new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8), claims);
            Value exp = claims.getFieldsMap().get("exp");
            if (exp == null || exp.getKindCase() != Value.KindCase.NUMBER_VALUE) {
                return Long.MAX_VALUE;
            }
            long seconds = (long) exp.getNumberValue() - unixSeconds.getAsLong();
            return seconds <= 0 ? 0 : Math.min(Long.MAX_VALUE / 1_000_000_000L, seconds) * 1_000_000_000L;
        } catch (Exception ex) {
            return Long.MAX_VALUE;
        }
    }

    private static String sha256(String token) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
