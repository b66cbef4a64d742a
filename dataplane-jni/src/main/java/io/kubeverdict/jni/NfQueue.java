// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * One bound NFQUEUE: the kernel hands this socket the packets sent to queue {@code number}.
 * Lives in the network namespace of the thread that opened it. Use {@link #batch} once to get
 * the {@link PacketBatch} through which packets are received and answered; close after the
 * thread using the batch has stopped. Every native call holds a use of the handle, so a close
 * that comes while a thread is still inside one (a loop that outlasted its join) never frees the
 * queue under it ({@link NativeHandle}).
 */
public final class NfQueue implements AutoCloseable {
    /** NFQA_CFG_F_FAIL_OPEN: accept packets instead of dropping them when the queue is full. */
    public static final int FLAG_FAIL_OPEN = 1;
    /** NFQA_CFG_F_GSO: take unsegmented GSO packets (we only read headers). */
    public static final int FLAG_GSO = 4;
    /**
     * Bytes of each packet copied to user space by default (the verdict queues): room for IPv6
     * extension chains far longer than benign senders use (hop-by-hop, destination options, a
     * routing header of 30 segments, fragment, AH) before the transport ports. The kernel copies
     * no more than the packet, so a SYN costs the same as with a shorter range. Headers that go on
     * past the copy make the packet unreadable, and unreadable packets are dropped.
     */
    public static final int COPY_BYTES = PacketBatch.DATA_BYTES;

    /** Indices of the shim's counters (kv_layout.h; checked by {@link NfqLayout}). */
    static final int STAT_RECEIVED = 0;

    static final int STAT_ENOBUFS = 1;
    static final int STAT_SKIPPED = 2;
    static final int STAT_VERDICT_MESSAGES = 3;
    static final int STAT_NETLINK_ERRORS = 4;
    static final int STAT_REPEATED = 5;

    /** Most bytes a queue may copy per packet (whole DNS responses: {@link #NfQueue(int, int, int)}). */
    public static final int MAX_COPY_BYTES = 16 * 1024;

    /**
     * The kernel's own queue length, set explicitly by the constructors that take none: how many
     * packets may wait for a verdict before the kernel drops new ones (accepts them, fail-open).
     */
    public static final int KERNEL_DEFAULT_LENGTH = 1024;
    /**
     * Most packets one queue may hold: each waiting packet pins its whole skb in kernel memory
     * (a first packet is usually small, but a datagram may be 64 KiB), so the length bounds memory too.
     */
    public static final int MAX_LENGTH = 65536;

    private final int number;
    private final int copyBytes;
    private final int length;
    private final NativeHandle queue;
    private PacketBatch batch;

    public NfQueue(int number, int flags) {
        this(number, flags, COPY_BYTES);
    }

    /**
     * A queue that copies up to copyBytes of each packet ({@link #COPY_BYTES}..{@link #MAX_COPY_BYTES});
     * its batch's slots are that large.
     */
    public NfQueue(int number, int flags, int copyBytes) {
        this(number, flags, copyBytes, KERNEL_DEFAULT_LENGTH);
    }

    /**
     * A queue where at most {@code length} packets ({@code 1..}{@link #MAX_LENGTH}) wait for their
     * verdict; the kernel drops those beyond it, or accepts them with {@link #FLAG_FAIL_OPEN}.
     */
    public NfQueue(int number, int flags, int copyBytes, int length) {
        NativeLibrary.ensureAvailable();
        if (number < 0 || number > 65535) {
            throw new IllegalArgumentException("queue number must be 0..65535, got " + number);
        }
        if (copyBytes < COPY_BYTES || copyBytes > MAX_COPY_BYTES) {
            throw new IllegalArgumentException(
                    "copy bytes must be " + COPY_BYTES + ".." + MAX_COPY_BYTES + ", got " + copyBytes);
        }
        if (length < 1 || length > MAX_LENGTH) {
            throw new IllegalArgumentException("queue length must be 1.." + MAX_LENGTH + ", got " + length);
        }
        this.number = number;
        this.copyBytes = copyBytes;
        this.length = length;
        this.queue = new NativeHandle(
                "queue " + number,
                NativeException.check("bind nfqueue " + number, NfqNative.open(number, copyBytes, flags, length)),
                NfqNative::close);
    }

    /** How many packets may wait in this queue for their verdict (what the kernel was told). */
    public int length() {
        return length;
    }

    /** Bytes copied per packet at most (the batch's slot data size). */
    public int copyBytes() {
        return copyBytes;
    }

    public int number() {
        return number;
    }

    public int fd() {
        long q = acquire();
        try {
            return NfqNative.fd(q);
        } finally {
            release();
        }
    }

    /** Asks for a socket receive buffer of this size; returns what the kernel granted. */
    public int receiveBuffer(int bytes) {
        long q = acquire();
        try {
            return (int) NativeException.check("SO_RCVBUF on nfqueue " + number, NfqNative.rcvbuf(q, bytes));
        } finally {
            release();
        }
    }

    /** The batch of this queue, made on first call with room for capacity packets. */
    public PacketBatch batch(int capacity) {
        if (batch == null) {
            batch = new PacketBatch(this, capacity);
        } else if (batch.capacity() != capacity) {
            throw new IllegalStateException("queue " + number + " already has a batch of " + batch.capacity());
        }
        return batch;
    }

    /**
     * From now on, packets of this queue's batch marked {@link PacketBatch#hold} move to queue
     * {@code holdQueue}, and wait there for their verdict ({@link #verdictOne}). With
     * {@code bypass} they are accepted while nothing listens on it.
     */
    public void holdTo(int holdQueue, boolean bypass) {
        long q = acquire();
        try {
            NativeException.check(
                    "hold queue " + holdQueue + " for nfqueue " + number, NfqNative.holdTo(q, holdQueue, bypass));
        } finally {
            release();
        }
    }

    /** The verdict for one packet of this queue, out of batch order (a held packet). */
    public void verdictOne(int packetId, boolean accept) {
        long q = acquire();
        try {
            NativeException.check(
                    "verdict on nfqueue " + number,
                    NfqNative.verdictOne(q, packetId, accept ? PacketBatch.NF_ACCEPT : PacketBatch.NF_DROP));
        } finally {
            release();
        }
    }

    /** Packets received into slots since open. */
    public long received() {
        return stat(STAT_RECEIVED);
    }

    /** Receives that failed with ENOBUFS: the kernel could not hand us packets (it dropped them, or
     * let them pass when fail-open); /proc/net/netfilter/nfnetlink_queue counts them too. */
    public long enobufs() {
        return stat(STAT_ENOBUFS);
    }

    /** Errors the kernel sent back, for verdicts it refused (an unknown packet id, for example). */
    public long netlinkErrors() {
        return stat(STAT_NETLINK_ERRORS);
    }

    /** Packets that arrived while the queue was being configured and were sent round the hook again. */
    public long repeatedDuringConfig() {
        return stat(STAT_REPEATED);
    }

    /** Netlink messages that were neither packets nor errors. */
    public long skippedMessages() {
        return stat(STAT_SKIPPED);
    }

    /** Verdict messages sent (a batch verdict counts once). */
    public long verdictMessages() {
        return stat(STAT_VERDICT_MESSAGES);
    }

    private long stat(int which) {
        long q = acquire();
        try {
            return NfqNative.stat(q, which);
        } finally {
            release();
        }
    }

    /** The handle for one native call, held until {@link #release}; throws IllegalStateException once closed. */
    long acquire() {
        return queue.acquire();
    }

    void release() {
        queue.release();
    }

    /**
     * Unbinds and frees the queue once no thread is inside a call on it: at once, or after a call
     * under way returns (waiting up to {@link NativeHandle#CLOSE_WAIT_MILLIS}; one that takes
     * longer unbinds and frees it as it ends). Later calls are refused.
     */
    @Override
    public void close() {
        int rc = queue.close(NativeHandle.CLOSE_WAIT_MILLIS);
        if (rc != NativeHandle.LEFT_TO_LAST_USE) {
            NativeException.check("unbind nfqueue " + number, rc);
        }
    }
}
