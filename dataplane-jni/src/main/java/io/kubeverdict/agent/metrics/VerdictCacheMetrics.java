// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.nft.CacheCounters;
import io.kubeverdict.agent.state.CacheGenerations;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verdict cache, as the kernel counts it (its nft counters and set, read when scraped, at most
 * every {@link #REREAD_NANOS}: listing a full set costs) and as the agent changes it
 * (generations that emptied it, generations that could not arm it).
 */
public final class VerdictCacheMetrics {
    private static final Logger log = LoggerFactory.getLogger(VerdictCacheMetrics.class);
    static final long REREAD_NANOS = 5_000_000_000L;

    private final Supplier<CacheCounters> reader;
    private final LongSupplier nanos;
    private CacheCounters last = CacheCounters.NONE;
    private long readAt;
    private boolean read;
    private boolean failing;

    VerdictCacheMetrics(Supplier<CacheCounters> reader, LongSupplier nanos) {
        this.reader = Objects.requireNonNull(reader);
        this.nanos = nanos;
    }

    /**
     * Registers the meters; {@code reader} lists the kernel's counters, null while there is no table
     * of ours yet. Meters hold their object weakly: each is registered on {@code generations} (which
     * the enforcer keeps) and reaches this object through its function.
     */
    public static VerdictCacheMetrics register(
            MeterRegistry registry, Supplier<CacheCounters> reader, CacheGenerations generations) {
        VerdictCacheMetrics metrics = new VerdictCacheMetrics(reader, System::nanoTime);
        FunctionCounter.builder(
                        "kubeverdict_verdict_cache_hits",
                        generations,
                        g -> metrics.current().hits())
                .description("New connections the kernel accepted from the verdict cache, without queueing them "
                        + "(read from the table's counters at most every 5 s)")
                .register(registry);
        FunctionCounter.builder(
                        "kubeverdict_verdict_cache_inserts",
                        generations,
                        g -> metrics.current().adds())
                .description("First packets accepted by the agent with the current generation's cache tag, whose key "
                        + "was offered to the verdict cache (one already held or a full set adds nothing)")
                .register(registry);
        Gauge.builder(
                        "kubeverdict_verdict_cache_entries",
                        generations,
                        g -> metrics.current().entries())
                .description("Keys the verdict cache holds now, both families")
                .register(registry);
        FunctionCounter.builder("kubeverdict_verdict_cache_flushes", generations, CacheGenerations::flushes)
                .description("Applied generations that emptied the verdict cache (every one, with the cache on)")
                .register(registry);
        FunctionCounter.builder("kubeverdict_verdict_cache_unarmed", generations, CacheGenerations::unarmed)
                .description("Generations during which nothing was cached: a verdict thread did not answer in time, "
                        + "or the kernel change failed")
                .register(registry);
        return metrics;
    }

    synchronized CacheCounters current() {
        long now = nanos.getAsLong();
        if (!read || now - readAt >= REREAD_NANOS) {
            read = true;
            readAt = now;
            try {
                CacheCounters counters = reader.get();
                if (counters == null) {
                    read = false; // no table of ours yet: ask again at the next scrape
                    return last;
                }
                last = counters;
                failing = false;
            } catch (RuntimeException e) {
                if (!failing) {
                    log.warn("reading the verdict cache's counters failed (kept the last values)", e);
                }
                failing = true;
            }
        }
        return last;
    }
}
