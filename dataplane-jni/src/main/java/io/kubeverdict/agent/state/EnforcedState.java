// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;

/**
 * One applied generation of the node's policy state: the snapshot, its compiled index, what of it
 * the kernel queues, the stream sequence it corresponds to, and its pod address guard. Immutable;
 * replaced as a whole.
 */
public record EnforcedState(
        NodeSnapshot snapshot,
        SnapshotIndex index,
        SelectedAddresses selected,
        long sequence,
        long appliedAtMillis,
        PodGuard guard) {

    public EnforcedState(
            NodeSnapshot snapshot,
            SnapshotIndex index,
            SelectedAddresses selected,
            long sequence,
            long appliedAtMillis) {
        this(snapshot, index, selected, sequence, appliedAtMillis, PodGuard.NONE);
    }
}
