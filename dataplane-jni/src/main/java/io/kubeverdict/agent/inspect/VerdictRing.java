// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded single-producer/single-consumer ring of verdicts in primitive arrays: the verdict
 * loop copies a packet's tuple and decision in without allocating or locking, a publisher thread
 * takes them out. When the ring is full the newest verdict is dropped (and counted): the verdict
 * loop never waits for watchers.
 */
public final class VerdictRing {
    private final int mask;
    private final int[] family;
    private final long[] srcHi;
    private final long[] srcLo;
    private final long[] dstHi;
    private final long[] dstLo;
    private final int[] protocol;
    private final int[] dstPort;
    private final int[] srcPort;
    private final int[] decision;
    private final boolean[] cached;
    private final int[] staged;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private long tailSeenByProducer;

    /** @param capacity a power of two */
    public VerdictRing(int capacity) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two >= 2, got " + capacity);
        }
        mask = capacity - 1;
        family = new int[capacity];
        srcHi = new long[capacity];
        srcLo = new long[capacity];
        dstHi = new long[capacity];
        dstLo = new long[capacity];
        protocol = new int[capacity];
        dstPort = new int[capacity];
        srcPort = new int[capacity];
        decision = new int[capacity];
        cached = new boolean[capacity];
        staged = new int[capacity];
    }

    /** Producer side (one thread): copies the verdict in; false when full. */
    public boolean offer(PacketTuple packet, int decisionCode) {
        return offer(packet, decisionCode, false);
    }

    /** As {@link #offer(PacketTuple, int)}; {@code keyCached}: the kernel's verdict cache took the key. */
    public boolean offer(PacketTuple packet, int decisionCode, boolean keyCached) {
        return offer(packet, decisionCode, keyCached, Decision.NOT_STAGED);
    }

    /**
     * As {@link #offer(PacketTuple, int, boolean)}, with the staged policies' would-be code where it
     * differs from the verdict ({@link Decision#NOT_STAGED} otherwise).
     */
    public boolean offer(PacketTuple packet, int decisionCode, boolean keyCached, int stagedCode) {
        long h = head.get();
        if (h - tailSeenByProducer > mask) {
            tailSeenByProducer = tail.getAcquire();
            if (h - tailSeenByProducer > mask) {
                dropped.incrementAndGet();
                return false;
            }
        }
        int i = (int) h & mask;
        family[i] = packet.family;
        srcHi[i] = packet.srcHi;
        srcLo[i] = packet.srcLo;
        dstHi[i] = packet.dstHi;
        dstLo[i] = packet.dstLo;
        protocol[i] = packet.protocol;
        dstPort[i] = packet.dstPort;
        srcPort[i] = packet.srcPort;
        decision[i] = decisionCode;
        cached[i] = keyCached;
        staged[i] = stagedCode;
        head.setRelease(h + 1);
        return true;
    }

    /** Consumer side (one thread): passes each waiting verdict to sink; returns how many. */
    public int drain(Sink sink, int max) {
        long t = tail.get();
        long h = head.getAcquire();
        int n = 0;
        PacketTuple packet = new PacketTuple();
        while (t < h && n < max) {
            int i = (int) t & mask;
            packet.family = family[i];
            packet.srcHi = srcHi[i];
            packet.srcLo = srcLo[i];
            packet.dstHi = dstHi[i];
            packet.dstLo = dstLo[i];
            packet.protocol = protocol[i];
            packet.dstPort = dstPort[i];
            packet.srcPort = srcPort[i];
            int code = decision[i];
            boolean keyCached = cached[i];
            int stagedCode = staged[i];
            t++;
            n++;
            tail.setRelease(t);
            sink.accept(packet, code, keyCached, stagedCode);
        }
        return n;
    }

    public long dropped() {
        return dropped.get();
    }

    /** Receives a verdict taken from the ring; the tuple is reused after the call returns. */
    @FunctionalInterface
    public interface Sink {
        /** @param stagedCode the staged policies' differing would-be code, or {@link Decision#NOT_STAGED} */
        void accept(PacketTuple packet, int decisionCode, boolean keyCached, int stagedCode);
    }
}
