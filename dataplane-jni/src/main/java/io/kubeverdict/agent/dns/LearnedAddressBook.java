// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.policy.DomainPattern;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.EndpointId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Every local pod's learned addresses, per domain set, across policy generations: a set is keyed
 * by (namespace/pod, learned_set_id), so a new generation that still watches it keeps what was
 * learned. {@link #view} gives a generation's index its {@link LearnedAddresses} (the index's
 * numbers resolved to sets once, so the verdict thread's question is two array reads and one
 * probe) and drops the sets no pod watches any more.
 */
public final class LearnedAddressBook {
    /** Addresses one pod keeps per domain set at most. */
    public static final int DEFAULT_LIMIT = 4096;
    /**
     * Addresses all pods of the node keep at most, over every set (about 25 MiB of heap at most:
     * an address with a 253-byte name is under 400 bytes).
     */
    public static final long DEFAULT_NODE_LIMIT = 65_536;

    private final Map<String, LearnedSet> sets = new ConcurrentHashMap<>();
    private final LongSupplier clock;
    private final int limit;
    private final LearnedSet.Budget budget;

    public LearnedAddressBook(LongSupplier nanoClock, int limit, long nodeLimit) {
        this.clock = nanoClock;
        this.limit = limit;
        this.budget = new LearnedSet.Budget(nodeLimit);
    }

    public LearnedAddressBook(LongSupplier nanoClock, int limit) {
        this(nanoClock, limit, DEFAULT_NODE_LIMIT);
    }

    public LearnedAddressBook() {
        this(System::nanoTime, DEFAULT_LIMIT);
    }

    /** The node-wide count of learned addresses, its limit, evictions and rejections. */
    public LearnedSet.Budget budget() {
        return budget;
    }

    public long now() {
        return clock.getAsLong();
    }

    static String key(EndpointId id, String setId) {
        return id.getNamespace() + "/" + id.getPod() + " " + setId;
    }

    /** The learned addresses as one index numbers them; builds what is missing, drops what is not watched. */
    public View view(SnapshotIndex index) {
        int endpoints = index.endpointCount();
        LearnedSet[][] byEndpoint = new LearnedSet[endpoints][];
        int[][] watches = new int[endpoints][];
        Set<String> kept = new HashSet<>();
        for (int e = 0; e < endpoints; e++) {
            watches[e] = index.domainWatches(e);
            if (watches[e].length == 0) {
                continue;
            }
            byEndpoint[e] = new LearnedSet[index.domainSetCount()];
            for (int d : watches[e]) {
                String key = key(index.endpointId(e), index.domainSetId(d));
                byEndpoint[e][d] = sets.computeIfAbsent(key, k -> new LearnedSet(limit, budget));
                kept.add(key);
            }
        }
        sets.keySet().retainAll(kept);
        DomainPattern[][] patterns = new DomainPattern[index.domainSetCount()][];
        for (int d = 0; d < patterns.length; d++) {
            List<DomainPattern> compiled = new ArrayList<>();
            for (String p : index.domainPatterns(d)) {
                DomainPattern pattern = DomainPattern.of(p);
                if (pattern != null) {
                    compiled.add(pattern); // an invalid pattern matches nothing
                }
            }
            patterns[d] = compiled.toArray(new DomainPattern[0]);
        }
        return new View(index, byEndpoint, watches, patterns, clock);
    }

    /**
     * Removes expired addresses everywhere; returns how many remain. Called by the sets' writer
     * (the DNS thread); it also resets the node-wide count to what watched sets hold, so sets a
     * new generation dropped stop counting against it.
     */
    public long sweep() {
        long now = now();
        long n = 0;
        for (LearnedSet s : sets.values()) {
            n += s.sweep(now);
        }
        budget.set(n);
        return n;
    }

    /** Addresses learned and not yet swept, over every set. */
    public long size() {
        long n = 0;
        for (LearnedSet s : sets.values()) {
            n += s.size();
        }
        return n;
    }

    public int setCount() {
        return sets.size();
    }

    /**
     * One generation's learned addresses: what {@link SnapshotIndex#decide(io.kubeverdict.policy.PacketTuple,
     * LearnedAddresses)} asks, and what the DNS thread writes to (watches and their compiled patterns).
     */
    public static final class View implements LearnedAddresses {
        private final SnapshotIndex index;
        private final LearnedSet[][] byEndpoint;
        private final int[][] watches;
        private final DomainPattern[][] patterns;
        private final LongSupplier clock;

        View(
                SnapshotIndex index,
                LearnedSet[][] byEndpoint,
                int[][] watches,
                DomainPattern[][] patterns,
                LongSupplier clock) {
            this.index = index;
            this.byEndpoint = byEndpoint;
            this.watches = watches;
            this.patterns = patterns;
            this.clock = clock;
        }

        @Override
        public boolean contains(int endpoint, int domainSet, int family, long hi, long lo) {
            LearnedSet s = set(endpoint, domainSet);
            return s != null && s.contains(family, hi, lo, clock.getAsLong());
        }

        @Override
        public String nameOf(int endpoint, int domainSet, int family, long hi, long lo) {
            LearnedSet s = set(endpoint, domainSet);
            return s == null ? null : s.nameOf(family, hi, lo, clock.getAsLong());
        }

        public SnapshotIndex index() {
            return index;
        }

        /** The domain sets an endpoint watches (a copy; inspection). */
        public int[] watchesOf(int endpoint) {
            return watches[endpoint].clone();
        }

        /** The set of an endpoint for a domain set, or null when it does not watch it. */
        public LearnedSet set(int endpoint, int domainSet) {
            LearnedSet[] row = endpoint >= 0 && endpoint < byEndpoint.length ? byEndpoint[endpoint] : null;
            return row == null || domainSet < 0 || domainSet >= row.length ? null : row[domainSet];
        }

        /** The domain sets an endpoint watches (shared array: do not change). */
        int[] watches(int endpoint) {
            return watches[endpoint];
        }

        DomainPattern[] patterns(int domainSet) {
            return patterns[domainSet];
        }

        /** Whether any local endpoint watches DNS answers. */
        public boolean anyWatches() {
            for (int[] w : watches) {
                if (w.length > 0) {
                    return true;
                }
            }
            return false;
        }

        public long now() {
            return clock.getAsLong();
        }
    }
}
