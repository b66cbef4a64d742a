// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.metrics.StagedVerdictMetrics;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.runtime.logging.LogLimiter;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's judge: decides with the current generation (one volatile read), offers the verdict
 * to watchers (nothing unless someone watches) and counts it by deciding policy, attributing the
 * code to the generation that produced it. Allocates nothing per packet. One per verdict thread:
 * its feed producer and policy counters' cache are single-threaded.
 *
 * <p>Staged policies: when the generation has any, the packet is decided in one pass both as
 * enforced and as if they were ({@link SnapshotIndex#decideWithStaged}: the lookups and every
 * direction no staged policy changes are done once); where the two differ, the would-be code goes to the feed and the staged
 * counters, and the accept is not cached (each such connection is seen). The verdict returned is
 * always the enforced one: a fused evaluation that throws is counted and logged, and the packet is
 * decided again by the enforced tiers alone.
 */
final class ObservedJudge implements Judge {
    private static final Logger log = LoggerFactory.getLogger(ObservedJudge.class);
    /** Shared by the verdict threads: a failing staged evaluation fails for every packet it sees. */
    private static final LogLimiter STAGED_FAILURES = new LogLimiter(1, TimeUnit.MINUTES);

    private final StateHolder state;
    private final VerdictFeed.Producer feed;
    private final PolicyVerdictMetrics policyVerdicts;
    private final StagedVerdictMetrics stagedVerdicts;
    private final StagedDecider stagedDecider;
    private int cacheMark; // of the last decided packet (this judge's thread only)
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final int SCTP = 132;

    ObservedJudge(
            StateHolder state,
            VerdictFeed feed,
            PolicyVerdictMetrics policyVerdicts,
            StagedVerdictMetrics stagedVerdicts) {
        this(state, feed.producer(), policyVerdicts, stagedVerdicts);
    }

    ObservedJudge(
            StateHolder state,
            VerdictFeed.Producer feed,
            PolicyVerdictMetrics policyVerdicts,
            StagedVerdictMetrics stagedVerdicts) {
        this(state, feed, policyVerdicts, stagedVerdicts, ObservedJudge::decideStaged);
    }

    /** With another staged decision: tests put one that throws, to show the enforced verdict stands. */
    ObservedJudge(
            StateHolder state,
            VerdictFeed.Producer feed,
            PolicyVerdictMetrics policyVerdicts,
            StagedVerdictMetrics stagedVerdicts,
            StagedDecider stagedDecider) {
        this.state = state;
        this.feed = feed;
        this.policyVerdicts = policyVerdicts;
        this.stagedVerdicts = stagedVerdicts;
        this.stagedDecider = stagedDecider;
    }

    /** The enforced and the would-be code of a packet under a generation ({@link Decision#enforced}, staged). */
    @FunctionalInterface
    interface StagedDecider {
        long decide(StateHolder.Generation generation, PacketTuple packet);
    }

    private static long decideStaged(StateHolder.Generation generation, PacketTuple packet) {
        return generation.state().index().decideWithStaged(packet, generation.learned());
    }

    @Override
    public int decide(PacketTuple packet) {
        cacheMark = 0;
        StateHolder.Generation current = state.generation();
        if (current != null
                && current.state().guard().holds(packet, current.state().index())) {
            return Judge.HOLD;
        }
        int code;
        int staged = Decision.NOT_STAGED;
        if (current != null && current.state().index().hasStaged()) {
            long both = decideWithStaged(current, packet);
            code = Decision.enforced(both);
            int wouldBe = Decision.staged(both);
            if (wouldBe != Decision.NOT_STAGED && Decision.allowed(wouldBe) != Decision.allowed(code)) {
                staged = wouldBe;
            }
        } else {
            code = state.decide(current, packet);
        }
        if (current != null
                && current.cacheMark() != 0
                && Decision.allowed(code)
                && staged == Decision.NOT_STAGED
                && cacheable(current, packet)) {
            cacheMark = current.cacheMark();
        }
        try {
            feed.publish(packet, code, cacheMark != 0, staged);
            policyVerdicts.record(current == null ? null : current.state(), code, cacheMark != 0);
            if (staged != Decision.NOT_STAGED) {
                stagedVerdicts.record(current.state(), staged, packet);
            }
        } catch (RuntimeException e) {
            // Telemetry never changes a verdict (the audit's L2): a failure here costs a count or a watched event.
        }
        return code;
    }

    /** Both codes; when that throws, the enforced one alone (the state's decide) and NOT_STAGED. */
    private long decideWithStaged(StateHolder.Generation current, PacketTuple packet) {
        try {
            return stagedDecider.decide(current, packet);
        } catch (RuntimeException e) {
            try {
                stagedVerdicts.failed();
                long suppressed = STAGED_FAILURES.tryAcquire();
                if (suppressed >= 0) {
                    log.warn(
                            "staged evaluation failed (the enforced verdict stands; {} more since the last log): {}",
                            suppressed,
                            e.toString());
                }
            } catch (RuntimeException ignored) {
                // counting a failure never changes the verdict either
            }
            return Decision.enforcedOnly(state.decide(current, packet));
        }
    }

    @Override
    public int cacheMark() {
        return cacheMark;
    }

    /**
     * A decision the kernel may repeat for the same key: a protocol whose key has a destination port
     * (TCP, UDP, SCTP), and no address learned from DNS can have taken part (neither end watches
     * domain names; learned sets change without a new generation).
     */
    private static boolean cacheable(StateHolder.Generation g, PacketTuple packet) {
        int p = packet.protocol;
        return (p == TCP || p == UDP || p == SCTP) && !g.state().index().mayUseLearned(packet);
    }
}
