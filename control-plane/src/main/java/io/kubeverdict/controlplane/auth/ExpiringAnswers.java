// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Answers of the API server kept until their own expiry, at most {@code maxEntries} of them: when
 * full, expired ones are dropped first, and if all are live the new answer is not kept (asking
 * again later is cheaper than letting made-up tokens or users grow memory).
 */
final class ExpiringAnswers<V> {
    private record Entry<V>(V value, long expiresNanos) {}

    private final int maxEntries;
    private final LongSupplier nanoTime;
    private final Map<String, Entry<V>> entries = new ConcurrentHashMap<>();

    ExpiringAnswers(int maxEntries, LongSupplier nanoTime) {
        this.maxEntries = maxEntries;
        this.nanoTime = nanoTime;
    }

    /** The kept answer, or null when there is none or it expired. */
    V get(String key) {
        Entry<V> e = entries.get(key);
        return e != null && nanoTime.getAsLong() - e.expiresNanos() < 0 ? e.value() : null;
    }

    /** Keeps {@code value} for {@code ttlNanos} from now (nothing when it is not positive). */
    void put(String key, V value, long ttlNanos) {
        if (ttlNanos <= 0) {
            return;
        }
        long now = nanoTime.getAsLong();
        if (entries.size() >= maxEntries) {
            for (Iterator<Entry<V>> it = entries.values().iterator(); it.hasNext(); ) {
                if (now - it.next().expiresNanos() >= 0) {
                    it.remove();
                }
            }
            if (entries.size() >= maxEntries) {
                return;
            }
        }
        // Saturate: a ttl of "forever" (Long.MAX_VALUE) must not wrap into the past.
        long expires = ttlNanos > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + ttlNanos;
        entries.put(key, new Entry<>(value, expires));
    }

    int size() {
        return entries.size();
    }
}
