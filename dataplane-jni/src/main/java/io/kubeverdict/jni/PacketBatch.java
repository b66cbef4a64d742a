// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Packets of one NFQUEUE receive and the verdicts for them, in a direct buffer the shim fills.
 * The buffer's address is handed to the shim once (attach); each {@link #receive} and
 * {@link #sendVerdicts} is then one JNI crossing with plain ints, whatever the batch size.
 *
 * <p>Slot {@code i} (0 &le; i &lt; {@link #size()}) holds one packet: its id, hook, ethertype,
 * how many bytes were copied (up to {@link #dataBytes()}, {@link #DATA_BYTES} unless the queue asked for more) and the full packet length; the copied
 * bytes start at {@link #dataOffset(int)} in {@link #buffer()}. Every received packet must get a
 * verdict ({@link #accept}/{@link #drop}; drop is the default) before {@link #sendVerdicts}, and
 * {@link #sendVerdicts} must come before the next {@link #receive}. Not thread-safe: one loop
 * thread owns it.
 */
public final class PacketBatch {
    /** Bytes per slot and where the copied packet starts in it: the shim's kv_layout.h, whose
     * values {@link NfqLayout} checks against these when the library loads. */
    static final int SLOT_SIZE = 536;

    static final int DATA_OFFSET = 24;
    public static final int DATA_BYTES = 512;

    static final int ID = 0;
    static final int HW_PROTOCOL = 4;
    static final int HOOK = 6;
    static final int VERDICT = 7;
    static final int COPIED = 8;
    static final int LENGTH = 12;
    static final int MARK = 16;

    static final byte NF_DROP = 0;
    static final byte NF_ACCEPT = 1;
    /** The slot verdict that moves the packet to the hold queue ({@link NfQueue#holdTo}). */
    static final byte VERDICT_HOLD = 2;
    /**
     * The slot verdict that sends the packet round its hook's chain again (NF_REPEAT) with its skb
     * mark set to the slot's mark ({@link #repeatMarked}).
     */
    static final byte VERDICT_REPEAT_MARK = 3;

    private final NfQueue queue;
    private final ByteBuffer buffer;
    private final int capacity;
    private final int slotSize;
    private final int dataBytes;
    // The operations' names, made once: the hot path builds no message it does not throw.
    private final String receiveOperation;
    private final String verdictOperation;
    private int size;

    PacketBatch(NfQueue queue, int capacity) {
        if (capacity <= 0 || capacity > 4096) {
            throw new IllegalArgumentException("batch capacity must be 1..4096, got " + capacity);
        }
        this.queue = queue;
        this.capacity = capacity;
        this.dataBytes = queue.copyBytes();
        this.receiveOperation = "receive from nfqueue " + queue.number();
        this.verdictOperation = "verdicts to nfqueue " + queue.number();
        this.slotSize = (DATA_OFFSET + dataBytes + 7) & ~7; // kv_nfqueue.c's stride
        this.buffer = ByteBuffer.allocateDirect(capacity * slotSize).order(ByteOrder.nativeOrder());
        long address = NativeException.check("direct buffer address", NfqNative.address(buffer));
        long q = queue.acquire();
        try {
            NativeException.check(
                    "attach batch to nfqueue " + queue.number(),
                    dataBytes == DATA_BYTES
                            ? NfqNative.attach(q, address, capacity)
                            : NfqNative.attachSized(q, address, capacity, dataBytes));
        } finally {
            queue.release();
        }
    }

    /** Most packet bytes a slot holds. */
    public int dataBytes() {
        return dataBytes;
    }

    /**
     * Waits up to timeoutMillis for packets and takes what is queued, up to {@link #capacity()}.
     * Returns the number received; 0 after a quiet timeout.
     */
    public int receive(int timeoutMillis) {
        size = 0;
        long q = queue.acquire();
        int n;
        try {
            n = NfqNative.receive(q, timeoutMillis);
        } finally {
            queue.release();
        }
        size = (int) NativeException.check(receiveOperation, n);
        return size;
    }

    /** Sends the verdicts of all received slots; returns the number of netlink messages used. */
    public int sendVerdicts() {
        long q = queue.acquire();
        int messages;
        try {
            messages = (int) NativeException.check(verdictOperation, NfqNative.verdict(q, size));
        } finally {
            queue.release();
        }
        size = 0;
        return messages;
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return capacity;
    }

    /** The slots; read it with absolute gets (native byte order). */
    public ByteBuffer buffer() {
        return buffer;
    }

    public int packetId(int i) {
        return buffer.getInt(slot(i) + ID);
    }

    /** The packet's ethertype: 0x0800 IPv4, 0x86dd IPv6. */
    public int hwProtocol(int i) {
        return buffer.getShort(slot(i) + HW_PROTOCOL) & 0xffff;
    }

    /** The netfilter hook (NF_INET_*: 0 prerouting, 1 input, 2 forward, 3 output, 4 postrouting). */
    public int hook(int i) {
        return buffer.get(slot(i) + HOOK) & 0xff;
    }

    /** How many bytes of the packet are in the slot. */
    public int copiedLength(int i) {
        return buffer.getInt(slot(i) + COPIED);
    }

    /** The packet's full length. */
    public int packetLength(int i) {
        return buffer.getInt(slot(i) + LENGTH);
    }

    /** Where the packet's first byte (the IP header) is in {@link #buffer()}. */
    public int dataOffset(int i) {
        return slot(i) + DATA_OFFSET;
    }

    public void accept(int i) {
        buffer.put(slot(i) + VERDICT, NF_ACCEPT);
    }

    /** The packet's skb mark as it was queued (0 when it had none). */
    public int mark(int i) {
        return buffer.getInt(slot(i) + MARK);
    }

    /**
     * Sends packet i round its hook's chain again with its skb mark set to {@code mark} (the whole
     * mark: pass {@link #mark} with bits added to keep the others), for a rule of our table that
     * reads them to accept it (the verdict cache's tag). Sent as a verdict of its own, never folded
     * into a batch verdict.
     */
    public void repeatMarked(int i, int mark) {
        int at = slot(i);
        buffer.putInt(at + MARK, mark);
        buffer.put(at + VERDICT, VERDICT_REPEAT_MARK);
    }

    public void drop(int i) {
        buffer.put(slot(i) + VERDICT, NF_DROP);
    }

    /** Moves packet i to the queue set with {@link NfQueue#holdTo}, to be answered from there. */
    public void hold(int i) {
        buffer.put(slot(i) + VERDICT, VERDICT_HOLD);
    }

    public boolean accepted(int i) {
        byte verdict = buffer.get(slot(i) + VERDICT);
        return verdict == NF_ACCEPT || verdict == VERDICT_REPEAT_MARK;
    }

    private int slot(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("slot " + i + " of " + size);
        }
        return i * slotSize;
    }
}
