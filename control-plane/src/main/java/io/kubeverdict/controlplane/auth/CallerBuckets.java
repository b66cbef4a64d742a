// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A token bucket per caller (refilling continuously up to the burst) in a bounded table: when it
 * is full, callers whose buckets are full again (idle) are forgotten first, and beyond that new
 * callers share one bucket, so a flood of made-up callers (an address or a name per call) cannot
 * grow memory. Shared by the per-caller call limits and the per-address TokenReview limit.
 */
final class CallerBuckets {
    private final double perNano;
    private final double burst;
    private final int maxCallers;
    private final LongSupplier nanoClock;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final Bucket overflow;

    CallerBuckets(double perSecond, int burst, int maxCallers, LongSupplier nanoClock) {
        // !(x > 0) also refuses NaN, which would make every comparison false: no limit at all.
        if (!(perSecond > 0) || burst < 1 || maxCallers < 1) {
            throw new IllegalArgumentException("a rate limit needs a positive rate, burst and table: " + perSecond
                    + "/s, burst " + burst + ", " + maxCallers + " callers");
        }
        this.perNano = perSecond / 1e9;
        this.burst = burst;
        this.maxCallers = maxCallers;
        this.nanoClock = nanoClock;
        this.overflow = new Bucket(nanoClock.getAsLong());
    }

    /** Whether {@code caller} may go on now (and one token is taken). */
    boolean tryTake(String caller) {
        return bucket(caller).tryTake(nanoClock.getAsLong());
    }

    private Bucket bucket(String caller) {
        Bucket b = buckets.get(caller);
        if (b != null) {
            return b;
        }
        if (buckets.size() >= maxCallers) {
            long now = nanoClock.getAsLong();
            buckets.values().removeIf(bucket -> bucket.isFull(now));
            if (buckets.size() >= maxCallers) {
                return overflow;
            }
        }
        return buckets.computeIfAbsent(caller, k -> new Bucket(nanoClock.getAsLong()));
    }

    private final class Bucket {
        private double tokens = burst;
        private long last;

        Bucket(long now) {
            this.last = now;
        }

        synchronized boolean tryTake(long now) {
            refill(now);
            if (tokens < 1) {
                return false;
            }
            tokens -= 1;
            return true;
        }

        synchronized boolean isFull(long now) {
            refill(now);
            return tokens >= burst;
        }

        private void refill(long now) {
            tokens = Math.min(burst, tokens + Math.max(0, now - last) * perNano);
            last = now;
        }
    }
}
