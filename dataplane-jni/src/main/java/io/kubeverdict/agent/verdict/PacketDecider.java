// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import java.nio.ByteBuffer;

/**
 * Decides one queued packet from its copied bytes: parse the headers into one reused
 * {@link PacketTuple}, then ask the judge, and report to the observer. Allocates nothing; one per
 * loop thread (the tuple is reused).
 *
 * <p>A packet the parser cannot read (headers past the copy, too many extension headers, cut or
 * impossible headers) is dropped, in fail-open mode too: its sender chose those headers, and
 * accepting them would let any pod pass the policy by padding its first packet (the flow is then
 * established and never queued again). Fail-open is for the agent being absent or overwhelmed,
 * not for input it cannot read. Only a judge that throws, a fault of ours, gets the fail mode's
 * default.
 */
final class PacketDecider {
    static final int DROP = 0;
    static final int ACCEPT = 1;
    /** To the hold queue: the judge answered {@link Judge#HOLD}. */
    static final int HOLD = 2;
    /** Accepted, and the kernel may remember the key: tag the packet with {@link #cacheMark()}. */
    static final int ACCEPT_CACHEABLE = 3;

    private final PacketTuple tuple = new PacketTuple();
    private final VerdictObserver observer;
    private final boolean judgeFailureAllows;
    private int cacheMark;

    PacketDecider(VerdictObserver observer, boolean judgeFailureAllows) {
        this.observer = observer;
        this.judgeFailureAllows = judgeFailureAllows;
    }

    /**
     * Whether the packet of {@code length} bytes whose first {@code copied} bytes are at
     * {@code offset} of {@code buffer} is accepted; {@code timed}: report its processing time.
     */
    boolean allows(Judge judge, ByteBuffer buffer, int offset, int copied, int length, boolean timed) {
        int verdict = verdict(judge, buffer, offset, copied, length, timed);
        return verdict == ACCEPT || verdict == ACCEPT_CACHEABLE;
    }

    /** The cache tag's mark bits of the last {@link #ACCEPT_CACHEABLE}. */
    int cacheMark() {
        return cacheMark;
    }

    /** As {@link #allows}: {@link #DROP}, {@link #ACCEPT}, {@link #ACCEPT_CACHEABLE} or {@link #HOLD}. */
    int verdict(Judge judge, ByteBuffer buffer, int offset, int copied, int length, boolean timed) {
        long start = timed ? System.nanoTime() : 0;
        int result = PacketParser.parse(buffer, offset, copied, length, tuple);
        if (result != PacketParser.OK) {
            observer.unreadable(result);
            return DROP;
        }
        int code;
        try {
            code = judge.decide(tuple);
        } catch (RuntimeException e) {
            observer.judgeFailed(e);
            return judgeFailureAllows ? ACCEPT : DROP;
        }
        if (code == Judge.HOLD) {
            return HOLD;
        }
        boolean allow = Decision.allowed(code);
        try {
            observer.decided(
                    tuple.family, tuple.protocol, allow, timed ? System.nanoTime() - start : VerdictObserver.NOT_TIMED);
        } catch (RuntimeException e) {
            // Counting a verdict never changes it (the audit's L2): a failing meter costs a count, not the policy.
        }
        if (!allow) {
            return DROP;
        }
        int mark = judge.cacheMark();
        if (mark != 0) {
            cacheMark = mark;
            return ACCEPT_CACHEABLE;
        }
        return ACCEPT;
    }
}
