// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.kubeverdict.policy.PacketTuple;

/**
 * Decides one packet: returns a {@link io.kubeverdict.policy.Decision} code (bit 0 set =
 * allowed). Called on the loop thread for every queued packet: it must not allocate or block.
 * The agent plugs in {@code SnapshotIndex::decide}.
 */
@FunctionalInterface
public interface Judge {
    /**
     * Not a decision: the packet's source or destination is a pod address of this node that the
     * state does not know yet; it waits in the hold queue. Even, so a caller that took it for a
     * decision code would drop, not allow.
     */
    int HOLD = Integer.MIN_VALUE;

    int decide(PacketTuple packet);

    /**
     * The verdict cache's tag for the packet {@link #decide} just allowed, as skb mark bits: non-zero
     * when that decision depended only on the packet's (source, destination, protocol, destination
     * port) under the generation that made it, so the kernel may accept later connections with the
     * same key itself; 0 otherwise (and for denies). Read on the same thread right after decide.
     */
    default int cacheMark() {
        return 0;
    }
}
