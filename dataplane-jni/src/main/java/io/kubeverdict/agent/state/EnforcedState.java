package io.kubeverdict.agent.state;

import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;

/**
 * One applied generation of the node's policy state: the snapshot, its compiled index, what of it
 * the kernel queues, and the stream sequence it corresponds to. Immutable; replaced as a whole.
 */
public record EnforcedState(NodeSnapshot snapshot, SnapshotIndex index, SelectedAddresses selected,
                            long sequence, long appliedAtMillis) {
}
