// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.proto.v1.IpSet;
import java.util.List;

/**
 * Where {@link SnapshotDiff} finds how a set went from one content to another without walking
 * both: the calculator's changes, kept by the hub ({@link SnapshotHub#setHistory}).
 */
@FunctionalInterface
interface SetHistory {
    /** Knows no change: every transition is found by comparing the two contents. */
    SetHistory NONE = (from, to) -> null;

    /**
     * The changes that took one set from the content {@code from} to {@code to}, oldest first,
     * each starting where the one before ended; null when they are not known.
     */
    List<SetChange> path(IpSet from, IpSet to);
}
