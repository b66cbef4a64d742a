// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;

/**
 * The packets the pod address guard holds: each one's queue id, when it came, and its parsed
 * tuple, in arrival order, at most {@code capacity}. {@link #resolve} judges them again: those a
 * judge no longer holds get its verdict, those held longer than the bound get the timeout verdict.
 * Pure bookkeeping, no I/O: the {@link Answer} sends. Single-threaded; preallocated, so holding and
 * resolving allocate nothing.
 */
final class HeldPackets {
    /** Why a held packet was answered. */
    enum Outcome {
        ALLOWED,
        DENIED,
        TIMED_OUT,
        OVERFLOW
    }

    /** Sends one held packet's verdict. */
    interface Answer {
        void answer(int packetId, boolean accept, Outcome outcome, long heldNanos);
    }

    private final int[] ids;
    private final long[] since;
    private final PacketTuple[] tuples;
    private final long maxHoldNanos;
    private final boolean acceptOnTimeout;
    private int count;

    /**
     * @param maxHoldNanos how long a packet waits for a state that knows its addresses
     * @param acceptOnTimeout what it gets then (and when the store overflows): accept in fail-open
     */
    HeldPackets(int capacity, long maxHoldNanos, boolean acceptOnTimeout) {
        ids = new int[capacity];
        since = new long[capacity];
        tuples = new PacketTuple[capacity];
        for (int i = 0; i < capacity; i++) {
            tuples[i] = new PacketTuple();
        }
        this.maxHoldNanos = maxHoldNanos;
        this.acceptOnTimeout = acceptOnTimeout;
    }

    int size() {
        return count;
    }

    /** Holds a packet; when full, the oldest is answered first (as if its time were up). */
    void hold(int packetId, PacketTuple tuple, long nowNanos, Answer answer) {
        if (count == ids.length) {
            answer.answer(ids[0], acceptOnTimeout, Outcome.OVERFLOW, nowNanos - since[0]);
            removeAt(0);
        }
        ids[count] = packetId;
        since[count] = nowNanos;
        copy(tuple, tuples[count]);
        count++;
    }

    /** Judges every held packet again with {@code judge}; answers and forgets those it can. */
    void resolve(Judge judge, long nowNanos, Answer answer) {
        int kept = 0;
        for (int i = 0; i < count; i++) {
            long held = nowNanos - since[i];
            int code;
            try {
                code = judge.decide(tuples[i]);
            } catch (RuntimeException e) {
                code = Judge.HOLD; // judged again next time, answered at its timeout at the latest
            }
            if (code != Judge.HOLD) {
                boolean allowed = Decision.allowed(code);
                answer.answer(ids[i], allowed, allowed ? Outcome.ALLOWED : Outcome.DENIED, held);
            } else if (held > maxHoldNanos) {
                answer.answer(ids[i], acceptOnTimeout, Outcome.TIMED_OUT, held);
            } else {
                if (kept != i) {
                    ids[kept] = ids[i];
                    since[kept] = since[i];
                    PacketTuple t = tuples[kept];
                    tuples[kept] = tuples[i];
                    tuples[i] = t;
                }
                kept++;
            }
        }
        count = kept;
    }

    private void removeAt(int index) {
        PacketTuple t = tuples[index];
        System.arraycopy(ids, index + 1, ids, index, count - index - 1);
        System.arraycopy(since, index + 1, since, index, count - index - 1);
        System.arraycopy(tuples, index + 1, tuples, index, count - index - 1);
        tuples[count - 1] = t;
        count--;
    }

    private static void copy(PacketTuple from, PacketTuple to) {
        to.family = from.family;
        to.srcHi = from.srcHi;
        to.srcLo = from.srcLo;
        to.dstHi = from.dstHi;
        to.dstLo = from.dstLo;
        to.protocol = from.protocol;
        to.dstPort = from.dstPort;
        to.srcPort = from.srcPort;
    }
}
