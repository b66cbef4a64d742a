// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.logging;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Rate limit for a repetitive log line (reconnect attempts, a peer that keeps failing): the first
 * occurrence is logged, then at most one per interval, each saying how many were suppressed in
 * between. Thread-safe.
 */
public final class LogLimiter {
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private long lastLogged;
    private boolean ever;
    private long suppressed;

    public LogLimiter(long interval, TimeUnit unit) {
        this(interval, unit, System::nanoTime);
    }

    LogLimiter(long interval, TimeUnit unit, LongSupplier nanoTime) {
        this.intervalNanos = unit.toNanos(interval);
        this.nanoTime = nanoTime;
    }

    /**
     * Whether to log this occurrence; -1 when not. Otherwise how many occurrences were suppressed
     * since the last one logged (0 the first time).
     */
    public synchronized long tryAcquire() {
        long now = nanoTime.getAsLong();
        if (ever && now - lastLogged < intervalNanos) {
            suppressed++;
            return -1;
        }
        ever = true;
        lastLogged = now;
        long n = suppressed;
        suppressed = 0;
        return n;
    }

    /** Starts over (the condition cleared, e.g. reconnected): the next occurrence is logged at once. */
    public synchronized void reset() {
        ever = false;
        suppressed = 0;
    }
}
