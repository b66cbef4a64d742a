// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.nft.CachedFlows;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.micrometer.core.instrument.Counter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the verdict cache's per-key connection counts into {@code
 * kubeverdict_policy_verdict_cache_hits_total} by deciding policy. Every applied change empties the
 * cache, so each key present was cached under the state in force, and that state's decision of the
 * key names the policy. A key's hits are its count minus one (its first connection was judged and
 * counted as a verdict); each reading adds what grew since the last one. Hits between the last
 * reading and a change's flush are not counted: a lower bound. One thread.
 */
public final class CacheHitsByPolicy {
    private record Key(IpAddress source, IpAddress destination, int protocol, int port) {}

    private final PolicyVerdictMetrics metrics;
    private EnforcedState countedUnder;
    private Map<Key, Long> hitsSeen = new HashMap<>();
    private final Map<Integer, Counter> byCode = new HashMap<>();

    public CacheHitsByPolicy(PolicyVerdictMetrics metrics) {
        this.metrics = metrics;
    }

    /**
     * Adds the hits of {@code flows}, read while {@code generation} was in force (the caller read it
     * before and after the listing and got the same one).
     */
    public void add(StateHolder.Generation generation, StateHolder state, List<CachedFlows.Flow> flows) {
        if (generation == null || !metrics.enabled()) {
            return;
        }
        if (generation.state() != countedUnder) {
            countedUnder = generation.state(); // a new state emptied the cache: counts start again
            hitsSeen = new HashMap<>();
            byCode.clear();
        }
        Map<Key, Long> seen = new HashMap<>(flows.size() * 2);
        PacketTuple tuple = new PacketTuple();
        for (CachedFlows.Flow flow : flows) {
            Key key = new Key(flow.source(), flow.destination(), flow.protocol(), flow.port());
            long hits = Math.max(0, flow.connections() - 1);
            long before = hitsSeen.getOrDefault(key, 0L);
            long added = hits >= before ? hits - before : hits; // fewer: expired and cached again since
            seen.put(key, hits);
            if (added == 0) {
                continue;
            }
            int code = state.decide(
                    generation, tuple.set(flow.source(), flow.destination(), flow.protocol(), flow.port()));
            Counter c = byCode.computeIfAbsent(code, k -> metrics.cacheHits(generation.state(), k));
            if (c != null) {
                c.increment(added);
            }
        }
        hitsSeen = seen;
    }
}
