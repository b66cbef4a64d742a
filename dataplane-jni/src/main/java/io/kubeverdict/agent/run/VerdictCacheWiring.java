// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.metrics.AgentMetrics;
import io.kubeverdict.agent.metrics.CacheHitsByPolicy;
import io.kubeverdict.agent.metrics.VerdictCacheMetrics;
import io.kubeverdict.agent.nft.CacheCounters;
import io.kubeverdict.agent.nft.CacheHeartbeat;
import io.kubeverdict.agent.nft.CacheRules;
import io.kubeverdict.agent.nft.CachedFlowReader;
import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.state.CacheGenerations;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.jni.Nftables;
import java.util.List;

/**
 * The verdict cache's parts of an agent (docs/design/verdict-cache.md), when --verdict-cache is
 * on: the generations that tag cacheable accepts and empty the kernel's cache, its metrics, the
 * heartbeat that keeps it answering only while this agent lives, and with --verdict-cache-counters
 * the reader of its keys' counts (ListCachedFlows, hits per policy).
 */
final class VerdictCacheWiring {
    /**
     * How long a generation change waits for the verdict threads to answer what they took before it,
     * so that no older verdict can still add a key to the cache; past it the generation caches nothing.
     */
    static final long ARM_TIMEOUT_MILLIS = 1000;

    private VerdictCacheWiring() {}

    /** The cache's generations (tagging, flushing) and the reader of its counted keys. */
    record Parts(CacheGenerations generations, CachedFlowReader flows) {
        static final Parts OFF = new Parts(CacheGenerations.OFF, CachedFlowReader.NONE);
    }

    /**
     * @param scrapeNft the scrapes' nft context, for the cache's counters
     * @param opened the start's closeables, closed in reverse order: the heartbeat is added here
     */
    static Parts start(
            AgentConfig config,
            VerdictQueues queues,
            NftManager table,
            KernelSets sets,
            AgentMetrics metrics,
            StateHolder state,
            Nftables scrapeNft,
            List<AutoCloseable> opened) {
        if (!config.verdictCache().enabled()) {
            return Parts.OFF;
        }
        CacheGenerations cache = new CacheGenerations(true, queues::awaitAnswered, ARM_TIMEOUT_MILLIS);
        VerdictCacheMetrics.register(
                metrics.registry(), () -> sets.started() ? CacheCounters.read(scrapeNft, table.config()) : null, cache);
        // The cache answers only while this agent lives (and once it wrote the table: a leftover's
        // cache stays dead until then).
        Nftables heartbeatNft = new Nftables();
        opened.add(heartbeatNft);
        opened.add(new CacheHeartbeat(
                () -> {
                    if (sets.started()) {
                        heartbeatNft.run(CacheRules.cacheAlive(table.config()));
                    }
                },
                () -> {
                    if (sets.started()) {
                        heartbeatNft.run(CacheRules.cacheDead(table.config()));
                    }
                })); // closed before its context (reverse order): a clean stop ends the cache at once
        if (!config.verdictCache().counters()) {
            return new Parts(cache, CachedFlowReader.NONE);
        }
        CachedFlowReader flows = new CachedFlowReader(new Nftables(), table::config, sets::started);
        opened.add(flows);
        opened.add(new CacheHitsReading(flows, state, new CacheHitsByPolicy(metrics.policyVerdicts())));
        return new Parts(cache, flows);
    }
}
