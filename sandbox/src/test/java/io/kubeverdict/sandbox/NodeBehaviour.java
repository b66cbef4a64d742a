// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import java.util.Set;

/**
 * How one node's forward hook treats the first packet of a new connection that crosses it, in
 * the situations of the "Fail-open and fail-closed, exactly" table (docs/design/fail-modes.md).
 */
sealed interface NodeBehaviour {
    boolean passes(String srcIp, String dstIp, PacketTuple tuple);

    /** An agent enforcing a snapshot: the verdict function decides. */
    record Enforcing(SnapshotIndex index) implements NodeBehaviour {
        @Override
        public boolean passes(String srcIp, String dstIp, PacketTuple tuple) {
            return Decision.allowed(index.decide(tuple));
        }
    }

    /**
     * The agent was killed, fail-closed: its table stays and queues new connections from or to
     * the local pods it had selected, and with nobody bound to the queue they are dropped.
     */
    record FailClosedKilled(Set<String> selectedIps) implements NodeBehaviour {
        public FailClosedKilled {
            selectedIps = Set.copyOf(selectedIps);
        }

        @Override
        public boolean passes(String srcIp, String dstIp, PacketTuple tuple) {
            return !selectedIps.contains(srcIp) && !selectedIps.contains(dstIp);
        }
    }

    /** The agent was killed, fail-open: the queue rule's bypass accepts everything unchecked. */
    record FailOpenKilled() implements NodeBehaviour {
        @Override
        public boolean passes(String srcIp, String dstIp, PacketTuple tuple) {
            return true;
        }
    }
}
