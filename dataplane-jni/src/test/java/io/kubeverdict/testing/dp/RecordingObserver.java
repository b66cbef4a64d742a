// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import io.kubeverdict.agent.verdict.VerdictObserver;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts what the loop reports, keyed "family/protocol/allowed" and "unreadable/reason". */
public final class RecordingObserver implements VerdictObserver {
    public final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    public final AtomicInteger failures = new AtomicInteger();

    @Override
    public void decided(int family, int protocol, boolean allowed, long nanos) {
        increment(family + "/" + protocol + "/" + (allowed ? "allow" : "deny"));
    }

    @Override
    public void unreadable(int reason) {
        increment("unreadable/" + reason);
    }

    @Override
    public void judgeFailed(RuntimeException error) {
        failures.incrementAndGet();
    }

    @Override
    public void queueFailed(RuntimeException error) {
        failures.incrementAndGet();
    }

    public int count(String key) {
        AtomicInteger n = counts.get(key);
        return n == null ? 0 : n.get();
    }

    private void increment(String key) {
        counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }
}
