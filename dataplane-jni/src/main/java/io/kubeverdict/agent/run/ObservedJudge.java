// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;

/**
 * The agent's judge: decides with the current generation (one volatile read), offers the verdict
 * to watchers (nothing unless someone watches) and counts it by deciding policy, attributing the
 * code to the generation that produced it. Allocates nothing per packet. One per verdict thread:
 * its feed producer and policy counters' cache are single-threaded.
 */
final class ObservedJudge implements Judge {
    private final StateHolder state;
    private final VerdictFeed.Producer feed;
    private final PolicyVerdictMetrics policyVerdicts;
    private int cacheMark; // of the last decided packet (this judge's thread only)
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final int SCTP = 132;

    ObservedJudge(StateHolder state, VerdictFeed feed, PolicyVerdictMetrics policyVerdicts) {
        this(state, feed.producer(), policyVerdicts);
    }

    ObservedJudge(StateHolder state, VerdictFeed.Producer feed, PolicyVerdictMetrics policyVerdicts) {
        this.state = state;
        this.feed = feed;
        this.policyVerdicts = policyVerdicts;
    }

    @Override
    public int decide(PacketTuple packet) {
        cacheMark = 0;
        StateHolder.Generation current = state.generation();
        if (current != null
                && current.state().guard().holds(packet, current.state().index())) {
            return Judge.HOLD;
        }
        int code = state.decide(current, packet);
        if (current != null && current.cacheMark() != 0 && Decision.allowed(code) && cacheable(current, packet)) {
            cacheMark = current.cacheMark();
        }
        try {
            feed.publish(packet, code, cacheMark != 0);
            policyVerdicts.record(current == null ? null : current.state(), code, cacheMark != 0);
        } catch (RuntimeException e) {
            // Telemetry never changes a verdict (the audit's L2): a failure here costs a count or a watched event.
        }
        return code;
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
