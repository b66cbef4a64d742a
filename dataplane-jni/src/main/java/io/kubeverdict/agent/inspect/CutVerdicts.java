// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import io.kubeverdict.agent.conntrack.CutSink;
import io.kubeverdict.agent.nft.CutAction;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.policy.DecisionText;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.ConnectionCut;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Verdict;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each cut of an established connection as a verdict: explained by the generation that denied it
 * (deciding policy and rule), with the connection's source port, conntrack id and what the node
 * now does with it, streamed to WatchVerdicts watchers and logged (debug).
 */
public final class CutVerdicts implements CutSink {
    private static final Logger log = LoggerFactory.getLogger(CutVerdicts.class);
    private final VerdictFeed feed;
    private final String action;

    public CutVerdicts(VerdictFeed feed, CutAction action) {
        this.feed = feed;
        this.action = action.flag();
    }

    @Override
    public void cut(PacketTuple tuple, int srcPort, int conntrackId, int decisionCode, EnforcedState state) {
        if (log.isDebugEnabled()) {
            log.debug(
                    "cut {} (source port {}, conntrack id {}): {}",
                    tuple,
                    srcPort,
                    Integer.toUnsignedString(conntrackId),
                    new DecisionText(state.index()).describe(decisionCode));
        }
        if (feed.watchers() == 0) {
            return; // nobody to explain it to
        }
        Explanation explanation = new Explainer(state.index())
                .explain(tuple).toBuilder()
                        .setVerdict(Verdict.VERDICT_DENY)
                        .setCut(ConnectionCut.newBuilder()
                                .setSrcPort(srcPort)
                                .setAction(action)
                                .setAppliedSequence(state.sequence())
                                .setConntrackId(conntrackId))
                        .build();
        feed.publishCut(tuple, explanation);
    }
}
