// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * Which verdicts to upload when there are more than {@code perSecond}: within each one-second
 * window at most {@code perSecond} pass, and when the previous window had more arrivals than
 * that, each one passes with probability perSecond / arrivals, so that under sustained load the
 * uploaded verdicts are spread over the second instead of being its first ones. One thread.
 */
final class VerdictSampler {
    private static final long WINDOW = 1_000_000_000L;

    private final int perSecond;
    private final LongSupplier nanoTime;
    private final DoubleSupplier random;
    private long windowStart;
    private boolean started;
    private long arrivals;
    private long previousArrivals;
    private long tokens;

    VerdictSampler(int perSecond, LongSupplier nanoTime, DoubleSupplier random) {
        this.perSecond = perSecond;
        this.nanoTime = nanoTime;
        this.random = random;
    }

    /** Whether this verdict is uploaded (false: it is counted as lost). */
    boolean admit() {
        long now = nanoTime.getAsLong();
        if (!started || now - windowStart >= WINDOW) {
            previousArrivals = started && now - windowStart < 2 * WINDOW ? arrivals : 0;
            started = true;
            windowStart = now;
            arrivals = 0;
            tokens = perSecond;
        }
        arrivals++;
        if (previousArrivals > perSecond && random.getAsDouble() * previousArrivals >= perSecond) {
            return false; // sampled out
        }
        if (tokens <= 0) {
            return false; // over the rate
        }
        tokens--;
        return true;
    }
}
