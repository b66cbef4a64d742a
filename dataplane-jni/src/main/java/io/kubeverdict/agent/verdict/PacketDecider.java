package io.kubeverdict.agent.verdict;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import java.nio.ByteBuffer;

/**
 * Decides one queued packet from its copied bytes: parse the headers into one reused
 * {@link PacketTuple}, then ask the judge, and report to the observer. Allocates nothing; one per
 * loop thread (the tuple is reused).
 */
final class PacketDecider {
    private final PacketTuple tuple = new PacketTuple();
    private final VerdictObserver observer;
    private final boolean defaultAllow;

    PacketDecider(VerdictObserver observer, boolean defaultAllow) {
        this.observer = observer;
        this.defaultAllow = defaultAllow;
    }

    /**
     * Whether the packet whose first {@code copied} bytes are at {@code offset} of {@code buffer}
     * is accepted; {@code timed}: report its processing time.
     */
    boolean allows(Judge judge, ByteBuffer buffer, int offset, int copied, boolean timed) {
        long start = timed ? System.nanoTime() : 0;
        int result = PacketParser.parse(buffer, offset, copied, tuple);
        if (result != PacketParser.OK) {
            observer.malformed(result, defaultAllow);
            return defaultAllow;
        }
        try {
            boolean allow = Decision.allowed(judge.decide(tuple));
            observer.decided(tuple.family, tuple.protocol, allow, timed ? System.nanoTime() - start : VerdictObserver.NOT_TIMED);
            return allow;
        } catch (RuntimeException e) {
            observer.judgeFailed(e);
            return defaultAllow;
        }
    }
}
