// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.nio.ByteBuffer;

/** Natives of kv_nfqueue.c; handles point to the shim's queue struct. */
final class NfqNative {
    private NfqNative() {}

    /** Binds queueNum; maxLength: packets that may wait for a verdict (NFQA_CFG_QUEUE_MAXLEN). */
    static native long open(int queueNum, int copyBytes, int flags, int maxLength);

    static native int close(long queue);

    static native int fd(long queue);

    static native int rcvbuf(long queue, int bytes);

    static native int attach(long queue, long address, int slots);

    /** attach with up to dataBytes of packet per slot (slots of DATA_OFFSET + dataBytes, rounded up to 8). */
    static native int attachSized(long queue, long address, int slots, int dataBytes);

    static native long stat(long queue, int which);

    static native int receive(long queue, int timeoutMillis);

    static native int verdict(long queue, int count);

    /** Where slots with {@link PacketBatch#VERDICT_HOLD} go: queue number, bypass flag. */
    static native int holdTo(long queue, int holdQueue, boolean bypass);

    /** One plain verdict (NF_DROP, NF_ACCEPT) for one packet id. */
    static native int verdictOne(long queue, int id, int verdict);

    static native long address(ByteBuffer direct);

    /** Copies kv_layout.h's constants into out (as many as fit; out may be null) and returns
     * how many the shim has. */
    static native int layout(int[] out);
}
