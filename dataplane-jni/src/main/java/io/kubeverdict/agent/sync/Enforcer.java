// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.kubeverdict.proto.v1.NodeSnapshot;

/**
 * Applies a complete, in-sync snapshot to the node (index swap + kernel sets). Called only from
 * the sync thread, only after InSync. A failure makes the sync client resync from scratch.
 */
@FunctionalInterface
public interface Enforcer {
    void enforce(NodeSnapshot snapshot, long sequence) throws Exception;
}
