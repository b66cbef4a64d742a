// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.CachedFlows;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.IpAddress;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class CacheHitsByPolicyTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final StateHolder state = new StateHolder(0);
    private final CacheHitsByPolicy hits = new CacheHitsByPolicy(new PolicyVerdictMetrics(registry, 10));

    private static CachedFlows.Flow fromB(int port, long connections) {
        return new CachedFlows.Flow(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), 6, port, connections);
    }

    private void enforce(long sequence) throws Exception {
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.allowFromB(), sequence);
    }

    private double hitsOfAllowFromB() {
        Counter c = registry.find("kubeverdict_policy_verdict_cache_hits")
                .tags("verdict", "allow", "reason", "rule")
                .counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void countsWhatEachKeysCountGrewByUnderTheDecidingPolicy() throws Exception {
        enforce(1);
        hits.add(state.generation(), state, List.of(fromB(80, 5)));
        assertThat(hitsOfAllowFromB())
                .as("the first connection was judged, not a hit")
                .isEqualTo(4);
        assertThat(registry.find("kubeverdict_policy_verdict_cache_hits")
                        .counter()
                        .getId()
                        .getTag("policy"))
                .endsWith("x/allow-from-b");

        hits.add(state.generation(), state, List.of(fromB(80, 8)));
        assertThat(hitsOfAllowFromB()).as("only what grew").isEqualTo(7);

        hits.add(state.generation(), state, List.of(fromB(80, 3)));
        assertThat(hitsOfAllowFromB())
                .as("expired and cached again: counted from its new start")
                .isEqualTo(9);

        enforce(2); // a new state emptied the cache: the same key's counts start again
        hits.add(state.generation(), state, List.of(fromB(80, 4)));
        assertThat(hitsOfAllowFromB()).isEqualTo(12);
    }

    @Test
    void nothingIsCountedBeforeAnyState() {
        hits.add(state.generation(), state, List.of(fromB(80, 5)));
        assertThat(registry.find("kubeverdict_policy_verdict_cache_hits").counters())
                .isEmpty();
    }
}
