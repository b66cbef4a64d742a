// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.ToAgent;

/**
 * One message for agents without its per-stream envelope (sequence and event time unset),
 * serialized at most once however many streams send the same instance: {@link SnapshotDiff}
 * hands the same instance to every stream that needs a shared IP set's transition or content.
 */
final class Payload {
    /**
     * The end of the snapshot, and of every later change: the stream says in its first InSync that
     * each change ends with one, so the agent enforces only complete changes (audit M1).
     */
    static final Payload IN_SYNC = new Payload(ToAgent.newBuilder()
            .setInSync(InSync.newBuilder().setChangeBoundaries(true))
            .build());

    /**
     * A stream's only first message when the agent's resume digest is the node's current
     * snapshot's: it continues from the state the agent enforces, nothing is sent before.
     */
    static final Payload RESUMED = new Payload(ToAgent.newBuilder()
            .setInSync(InSync.newBuilder().setChangeBoundaries(true).setResumed(true))
            .build());

    private final ToAgent message;
    private volatile byte[] encoded;

    Payload(ToAgent message) {
        if (message.getSequence() != 0 || message.getEventTimeUnixNanos() != 0) {
            throw new IllegalArgumentException("a payload carries no sequence or event time");
        }
        this.message = message;
    }

    ToAgent message() {
        return message;
    }

    /** The message's wire bytes, computed on first use (racing first uses compute equal arrays). */
    byte[] encoded() {
        byte[] e = encoded;
        if (e == null) {
            e = message.toByteArray();
            encoded = e;
        }
        return e;
    }

    @Override
    public String toString() {
        return message.getPayloadCase() + " " + message.getSerializedSize() + " bytes";
    }
}
