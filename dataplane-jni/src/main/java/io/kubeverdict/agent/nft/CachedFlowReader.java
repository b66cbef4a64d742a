// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Nftables;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Reads the verdict cache's counted keys ({@link CachedFlows}) for inspection and the per-policy
 * hit counts: one nft context of its own, one reader at a time (libnftables contexts are not
 * shared between threads).
 */
public final class CachedFlowReader implements AutoCloseable {
    /** For an agent whose cache keeps no counts: nothing to read. */
    public static final CachedFlowReader NONE = new CachedFlowReader(null, () -> null, () -> false);

    private final Nftables nft;
    private final Supplier<RulesetConfig> config;
    private final BooleanSupplier written;

    /** @param written whether the agent has written its table yet (before, there is no cache to list) */
    public CachedFlowReader(Nftables nft, Supplier<RulesetConfig> config, BooleanSupplier written) {
        this.nft = nft;
        this.config = config;
        this.written = written;
    }

    public boolean counted() {
        RulesetConfig c = config.get();
        return c != null && c.cache().enabled() && c.cache().counters();
    }

    /** The cached keys with their counts; empty when the cache keeps no counts. */
    public synchronized Optional<List<CachedFlows.Flow>> read() {
        if (!counted()) {
            return Optional.empty();
        }
        return Optional.of(written.getAsBoolean() ? CachedFlows.read(nft, config.get()) : List.of());
    }

    @Override
    public synchronized void close() {
        if (nft != null) {
            nft.close();
        }
    }
}
