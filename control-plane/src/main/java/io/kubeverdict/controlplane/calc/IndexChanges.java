// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

/**
 * What {@link ClusterIndex} reports as it changes, so that whatever is derived from it (the
 * cached parts of node snapshots) knows what went stale.
 */
interface IndexChanges {
    /** A pod's endpoint changed: the pod itself, or which policies select it. */
    void endpointChanged(String podKey);

    /** A node's endpoints changed, or the policies selecting them did, or its pod ranges. */
    void nodeChanged(String node);

    /** The members of a live set changed. */
    void membersChanged(MemberSet set);

    /** A set is gone: no policy uses it any more. */
    void setDropped(MemberSet set);
}
