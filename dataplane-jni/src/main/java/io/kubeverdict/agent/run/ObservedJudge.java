// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.verdict.Judge;
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
        StateHolder.Generation current = state.generation();
        if (current != null
                && current.state().guard().holds(packet, current.state().index())) {
            return Judge.HOLD;
        }
        int code = state.decide(current, packet);
        try {
            feed.publish(packet, code);
            policyVerdicts.record(current == null ? null : current.state(), code);
        } catch (RuntimeException e) {
            // Telemetry never changes a verdict (the audit's L2): a failure here costs a count or a watched event.
        }
        return code;
    }
}
