// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.metrics.StagedVerdictMetrics;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Verdict;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The judge with staged policies: the enforced verdict returned, the would-be one counted and fed. */
class StagedJudgeTest {

    static final PacketTuple B_TO_C =
            new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.3"), Protocol.TCP_VALUE, 80);
    static final PacketTuple B_TO_A =
            new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);
    static final PacketTuple C_TO_A =
            new PacketTuple().set(IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.1"), Protocol.TCP_VALUE, 80);

    @Test
    void aStagedDenyAllLeavesTheVerdictAndCountsAndFeedsTheWouldBeDeny() throws Exception {
        StateHolder state = new StateHolder(0);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.stagedDenyAllForC(), 1);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        StagedVerdictMetrics staged = new StagedVerdictMetrics(registry, 10);
        List<Explanation> seen = new CopyOnWriteArrayList<>();
        try (VerdictFeed feed = new VerdictFeed(1024, state::generation);
                AutoCloseable subscription = feed.subscribe(Verdict.VERDICT_UNSPECIFIED, true, sink(seen))) {
            ObservedJudge judge = new ObservedJudge(state, feed, new PolicyVerdictMetrics(registry, 10), staged);

            assertThat(Decision.allowed(judge.decide(B_TO_C)))
                    .as("enforced: c is not isolated")
                    .isTrue();
            assertThat(judge.cacheMark()).isZero();
            assertThat(Decision.allowed(judge.decide(B_TO_A))).isTrue(); // no staged tiers on a
            assertThat(Decision.allowed(judge.decide(B_TO_C))).isTrue();

            assertThat(registry.get("kubeverdict_staged_verdicts")
                            .tags("verdict", "would_deny", "policy", "default/x/deny-all", "rule", "")
                            .counter()
                            .count())
                    .isEqualTo(2.0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(seen)
                    .as("only the two changed verdicts reach a staged-only watcher")
                    .hasSize(2);
            Explanation e = seen.get(0);
            assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
            assertThat(e.getStaged().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
            assertThat(e.getStaged().getStagedPolicy().getName()).isEqualTo("x/deny-all");
            assertThat(e.getStaged().getDirection()).isEqualTo("ingress");
            assertThat(e.getDestination().getPod()).isEqualTo("c");
        }
        registry.close();
    }

    @Test
    void aStagedEvaluationThatThrowsLeavesTheEnforcedVerdictAndIsCounted() throws Exception {
        StateHolder state = new StateHolder(0);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.stagedDenyAllForC(), 1);
        assertThat(state.generation().state().index().hasStaged())
                .as("the staged evaluation is reached")
                .isTrue();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        StagedVerdictMetrics staged = new StagedVerdictMetrics(registry, 10);
        List<Explanation> seen = new CopyOnWriteArrayList<>();
        try (VerdictFeed feed = new VerdictFeed(1024, state::generation);
                AutoCloseable subscription = feed.subscribe(Verdict.VERDICT_UNSPECIFIED, false, sink(seen))) {
            ObservedJudge judge = new ObservedJudge(
                    state, feed.producer(), new PolicyVerdictMetrics(registry, 10), staged, (generation, packet) -> {
                        throw new IllegalStateException("staged evaluation broken on purpose");
                    });

            assertThat(Decision.allowed(judge.decide(B_TO_C)))
                    .as("enforced allow stands (the staged deny-all is never enforced)")
                    .isTrue();
            assertThat(Decision.allowed(judge.decide(C_TO_A)))
                    .as("enforced deny stands (a admits b only)")
                    .isFalse();
            assertThat(Decision.allowed(judge.decide(B_TO_C))).isTrue();

            assertThat(registry.get("kubeverdict_staged_errors").counter().count())
                    .isEqualTo(3.0);
            assertThat(staged.failures()).isEqualTo(3.0);
            assertThat(registry.find("kubeverdict_staged_verdicts").counters())
                    .as("no would-be verdict is counted from a failed evaluation")
                    .isEmpty();
            assertThat(registry.scrape()).contains("kubeverdict_staged_errors_total 3.0");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen.size() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(seen).as("every verdict is still fed").hasSize(3);
            assertThat(seen).allSatisfy(e -> assertThat(e.hasStaged()).isFalse());
            assertThat(seen.get(1).getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        }
        registry.close();
    }

    @Test
    void judgingAStagedDifferenceAllocatesNothingOnceItsSeriesExists() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        StateHolder state = new StateHolder(0);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.stagedDenyAllForC(), 1);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (VerdictFeed feed = new VerdictFeed(1024, state::generation)) {
            ObservedJudge judge = new ObservedJudge(
                    state, feed, new PolicyVerdictMetrics(registry, 10), new StagedVerdictMetrics(registry, 10));
            int[] sink = new int[1];
            Runnable packets = () -> {
                for (int i = 0; i < 200_000; i++) {
                    sink[0] += judge.decide((i & 1) == 0 ? B_TO_C : B_TO_A);
                }
            };
            packets.run();
            long before = threads.getCurrentThreadAllocatedBytes();
            packets.run();
            assertThat(threads.getCurrentThreadAllocatedBytes() - before)
                    .as("bytes allocated for 200k packets, half of them changed by a staged policy")
                    .isLessThan(16 * 1024);
            assertThat(sink[0]).isNotZero();
        }
        registry.close();
    }

    private static VerdictFeed.Sink sink(List<Explanation> seen) {
        return new VerdictFeed.Sink() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void onNext(Explanation verdict) {
                seen.add(verdict);
            }
        };
    }
}
