package io.kubeverdict.agent.verdict;

import io.kubeverdict.policy.PacketTuple;

/**
 * Decides one packet: returns a {@link io.kubeverdict.policy.Decision} code (bit 0 set =
 * allowed). Called on the loop thread for every queued packet: it must not allocate or block.
 * The agent plugs in {@code SnapshotIndex::decide}.
 */
@FunctionalInterface
public interface Judge {
    int decide(PacketTuple packet);
}
