// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.metrics.CacheHitsByPolicy;
import io.kubeverdict.agent.nft.CachedFlowReader;
import io.kubeverdict.agent.nft.CachedFlows;
import io.kubeverdict.agent.state.StateHolder;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the verdict cache's counted keys into the per-policy hits on a thread of its own. A
 * listing costs about 40 µs of CPU per key (2.5 s for 64k keys here), so the next reading waits
 * {@link #SHARE} times as long as the last one took, at least {@link #MIN_PERIOD_NANOS}: at most
 * 1/{@value #SHARE} of a CPU whatever the cache holds. The counts are cumulative per key, so a longer
 * wait loses nothing but the hits of keys a change empties meanwhile.
 */
final class CacheHitsReading implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CacheHitsReading.class);
    static final long MIN_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(10);
    static final int SHARE = 20;

    private final CachedFlowReader flows;
    private final StateHolder state;
    private final CacheHitsByPolicy hits;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kv-cache-hits");
        t.setDaemon(true);
        return t;
    });

    CacheHitsReading(CachedFlowReader flows, StateHolder state, CacheHitsByPolicy hits) {
        this.flows = flows;
        this.state = state;
        this.hits = hits;
        timer.schedule(this::read, MIN_PERIOD_NANOS, TimeUnit.NANOSECONDS);
    }

    /** How long to wait after a reading that took {@code tookNanos}. */
    static long nextDelayNanos(long tookNanos) {
        return Math.max(MIN_PERIOD_NANOS, SHARE * Math.max(0, tookNanos));
    }

    private void read() {
        long start = System.nanoTime();
        try {
            StateHolder.Generation before = state.generation();
            List<CachedFlows.Flow> read = flows.read().orElse(List.of());
            if (before != null && state.generation() == before) { // else: read across a change
                hits.add(before, state, read);
            }
        } catch (RuntimeException e) {
            log.debug("reading the verdict cache's keys failed (counted at the next reading)", e);
        }
        try {
            timer.schedule(this::read, nextDelayNanos(System.nanoTime() - start), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
