// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.policy.PacketTuple;

/** Told about each connection the re-judging cut (for WatchVerdicts and logs). Its thread; may allocate. */
@FunctionalInterface
public interface CutSink {
    /**
     * @param tuple the connection's original direction, destination after DNAT (reused after the call)
     * @param srcPort its source port (0 without ports)
     * @param decisionCode what {@code state}'s verdict function answered for the tuple
     */
    void cut(PacketTuple tuple, int srcPort, int conntrackId, int decisionCode, EnforcedState state);

    CutSink NONE = (tuple, srcPort, conntrackId, decisionCode, state) -> {};
}
