package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Tuple;

/**
 * A node snapshot compiled for the hot path: endpoints by address, IP-set membership, rules in
 * evaluation order. Immutable and thread-safe; a changed snapshot compiles into a new index.
 * The semantics are those documented in policy.proto.
 */
public final class SnapshotIndex {

    private SnapshotIndex() {}

    public static SnapshotIndex compile(NodeSnapshot snapshot) {
        throw new UnsupportedOperationException("verdict function not written yet");
    }

    /**
     * The hot path: decides a packet without allocating. Returns a {@link Decision} code: whether
     * it is allowed, and an index of what decided, which {@link #describe} turns into words.
     */
    public int decide(PacketTuple packet) {
        throw new UnsupportedOperationException("verdict function not written yet");
    }

    /** The full story of a tuple, for explain tools and verdict logs (allocates). */
    public Explanation explain(Tuple tuple) {
        throw new UnsupportedOperationException("verdict function not written yet");
    }
}
