package io.kubeverdict.agent.sync;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;

/**
 * Accumulates one stream's messages into the node's snapshot. A fresh builder per stream is what
 * lets a reconnect build the new state aside while the old one stays enforced.
 * Throws IllegalArgumentException or IllegalStateException for a message that does not fit
 * (for example an update referring to an IP set never sent), which makes the client resync.
 */
public interface SnapshotBuilder {
    void apply(ToAgent message);

    NodeSnapshot snapshot();
}
