// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/**
 * The verdict cache's shape in the table: whether there is one, how long a remembered key stays
 * (from its insertion; a hit does not extend it) and how many keys each family's set holds at most
 * (beyond that, new keys are simply not remembered: their connections keep going to the queue).
 * {@code counters}: each key counts the connections the kernel accepted with it (an nft element
 * counter, per CPU: 16 bytes × CPUs of kernel memory per key), for per-key and per-policy hits.
 */
public record CacheSettings(boolean enabled, int ttlSeconds, int size, boolean counters) {
    public static final CacheSettings OFF = new CacheSettings(false, 60, 65536, false);
    public static final int DEFAULT_TTL_SECONDS = 60;
    public static final int DEFAULT_SIZE = 65536;
    /**
     * How long the cache keeps answering after its agent last renewed it ({@link CacheHeartbeat},
     * every {@link CacheHeartbeat#PERIOD_MILLIS}): a killed agent's cache stops within this time.
     */
    public static final int LIVENESS_SECONDS = 2;

    public CacheSettings {
        if (ttlSeconds < 1 || ttlSeconds > 86_400) {
            throw new IllegalArgumentException("verdict cache TTL must be 1..86400 s, got " + ttlSeconds);
        }
        if (size < 1 || size > 1 << 24) {
            throw new IllegalArgumentException("verdict cache size must be 1.." + (1 << 24) + ", got " + size);
        }
    }

    public static CacheSettings on(int ttlSeconds, int size) {
        return new CacheSettings(true, ttlSeconds, size, false);
    }

    public CacheSettings withCounters(boolean on) {
        return new CacheSettings(enabled, ttlSeconds, size, on);
    }
}
