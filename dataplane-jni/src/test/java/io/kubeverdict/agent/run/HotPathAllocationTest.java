// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.inspect.VerdictRing;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.metrics.VerdictMetrics;
import io.kubeverdict.agent.state.CacheGenerations;
import io.kubeverdict.agent.state.GenerationListener;
import io.kubeverdict.agent.state.PodGuard;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Protocol;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/**
 * What the agent adds to the verdict loop per packet — the state read, the verdict-feed offer and
 * the metrics, the per-policy verdict counter included — allocates nothing, also while a watcher is registered (the ring copies primitives).
 */
class HotPathAllocationTest {

    @Test
    void judgingFeedingAndCountingAPacketAllocatesNothing() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        StateHolder state = new StateHolder(0);
        new StateEnforcer(
                        state,
                        selected -> {},
                        Clock.systemUTC(),
                        GenerationListener.NONE,
                        snapshot -> PodGuard.NONE,
                        new CacheGenerations(true, timeout -> true, 100))
                .enforce(SnapshotFixtures.allowFromB(), 1); // with the verdict cache: allows are tagged
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        VerdictMetrics metrics = new VerdictMetrics(registry);
        PolicyVerdictMetrics policyVerdicts = new PolicyVerdictMetrics(registry, 10);
        try (VerdictFeed feed = new VerdictFeed(1024, state::generation)) {
            ObservedJudge judge = new ObservedJudge(
                    state, feed, policyVerdicts, new io.kubeverdict.agent.metrics.StagedVerdictMetrics(registry, 10));
            PacketTuple allowed = new PacketTuple()
                    .set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);
            PacketTuple denied = new PacketTuple()
                    .set(IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.1"), Protocol.UDP_VALUE, 53);
            VerdictRing watchedRing = new VerdictRing(1024); // what a watched feed does: copy in, or drop when full
            int[] sink = new int[1];
            Runnable packets = () -> {
                for (int i = 0; i < 200_000; i++) {
                    PacketTuple p = (i & 1) == 0 ? allowed : denied;
                    int code = judge.decide(p); // decide, offer to watchers, count by deciding policy
                    watchedRing.offer(p, code);
                    metrics.decided(p.family, p.protocol, (code & 1) != 0, 1_000 + (i & 1023));
                    sink[0] += code;
                }
            };
            packets.run(); // warm up: JIT, meters' lazily built structures
            long before = threads.getCurrentThreadAllocatedBytes();
            packets.run();
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            // a few hundred bytes of slack for timer ring rotation; per-packet allocation would be megabytes
            assertThat(allocated).as("bytes allocated for 200k packets").isLessThan(16 * 1024);
            assertThat(sink[0]).isNotZero();
            assertThat(registry.get("kubeverdict_policy_verdicts").counters())
                    .as("one series per deciding reason")
                    .hasSize(2);
            assertThat(registry.get("kubeverdict_policy_verdict_cache_keys")
                            .counter()
                            .count())
                    .as("every allow (half the packets, two runs) gave its key to the cache, none of the denies")
                    .isEqualTo(200_000);
        }
        registry.close();
    }
}
