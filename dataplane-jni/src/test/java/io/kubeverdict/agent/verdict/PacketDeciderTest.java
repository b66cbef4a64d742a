// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.testing.dp.Crafted;
import io.kubeverdict.testing.dp.RecordingObserver;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Verdicts of single packets as a fail-open agent's loop decides them (H4 of the security audit):
 * a packet whose headers cannot be read is dropped, also in fail-open mode; only a judge that
 * throws gets the fail mode's default.
 */
class PacketDeciderTest {
    private static final String CLIENT = "fd77:1::2";
    private static final String SERVER = "fd77:2::2";
    private static final int DEST_OPTS = 60;
    private static final int TCP = 6;
    private static final int SLOT_DATA = 16; // where a batch slot's packet starts

    private final AtomicInteger judged = new AtomicInteger();
    /** The policy: port 80 denied, everything else allowed. */
    private final Judge port80Denied = p -> {
        judged.incrementAndGet();
        return p.dstPort == 80 ? 0 : 1;
    };

    private final RecordingObserver observer = new RecordingObserver();
    private final PacketDecider failOpen = new PacketDecider(observer, true);

    @Test
    void aSynPaddedWithDestinationOptionsIsJudgedByItsPort() throws Exception {
        // the audit's packet: one 0x1e option of 94 bytes, 104 bytes in all; TCP at byte 144
        byte[] syn = synBehind(Crafted.destinationOptions(TCP, 104));
        assertThat(decide(failOpen, syn, port80Denied)).as("a denied SYN").isFalse();
        assertThat(judged).hasValue(1);
    }

    @Test
    void aSynWhoseTcpHeaderLiesBeyondTheCopyIsDroppedInFailOpenMode() throws Exception {
        byte[] syn = synBehind(Crafted.destinationOptions(TCP, NfQueue.COPY_BYTES + 88));
        assertThat(decide(failOpen, syn, port80Denied)).isFalse();
        assertThat(judged).as("nothing to judge").hasValue(0);
        assertThat(observer.count("unreadable/" + PacketParser.BEYOND_COPY)).isEqualTo(1);
    }

    @Test
    void aSynBehindNineExtensionHeadersIsDroppedInFailOpenMode() throws Exception {
        byte[] chain = new byte[0];
        for (int i = 0; i < 9; i++) {
            chain = concat(Crafted.destinationOptions(i == 0 ? TCP : DEST_OPTS, 8), chain);
        }
        byte[] syn = Crafted.ipv6(DEST_OPTS, CLIENT, SERVER, chain, Crafted.tcpSyn(40000, 80, 0));
        assertThat(syn.length).as("all of it copied").isLessThanOrEqualTo(NfQueue.COPY_BYTES);
        assertThat(decide(failOpen, syn, port80Denied)).isFalse();
        assertThat(judged).hasValue(0);
        assertThat(observer.count("unreadable/" + PacketParser.TOO_MANY_HEADERS))
                .isEqualTo(1);
    }

    @Test
    void aPacketCutInItsHeadersIsDroppedInFailOpenMode() throws Exception {
        byte[] syn = Crafted.ipv4(TCP, "10.77.1.2", "10.77.2.2", Crafted.tcpSyn(40000, 81, 0));
        assertThat(decide(failOpen, java.util.Arrays.copyOf(syn, 22), port80Denied))
                .isFalse();
        assertThat(judged).hasValue(0);
        assertThat(observer.count("unreadable/" + PacketParser.TRUNCATED)).isEqualTo(1);
    }

    @Test
    void aJudgeThatThrowsStillGetsTheFailModesDefault() throws Exception {
        byte[] syn = synBehind(new byte[0]);
        Judge broken = p -> {
            throw new IllegalStateException("a bug of ours, not the sender's doing");
        };
        assertThat(decide(failOpen, syn, broken)).isTrue();
        assertThat(decide(new PacketDecider(observer, false), syn, broken)).isFalse();
        assertThat(observer.failures).hasValue(2);
    }

    @Test
    void aReadablePacketIsJudged() throws Exception {
        byte[] syn = Crafted.ipv6(TCP, CLIENT, SERVER, new byte[0], Crafted.tcpSyn(40000, 81, 0));
        assertThat(decide(failOpen, syn, port80Denied)).isTrue();
        assertThat(judged).hasValue(1);
    }

    /** The audit's L2: a failing meter does not turn a denied packet into the fail mode's default. */
    @Test
    void aTelemetryFailureDoesNotChangeTheVerdict() throws Exception {
        PacketDecider brokenMeters = new PacketDecider(
                new VerdictObserver() {
                    @Override
                    public void decided(int family, int protocol, boolean allowed, long nanos) {
                        throw new IllegalStateException("the registry refused a meter");
                    }

                    @Override
                    public void unreadable(int reason) {}

                    @Override
                    public void judgeFailed(RuntimeException error) {}

                    @Override
                    public void queueFailed(RuntimeException error) {}
                },
                true);
        byte[] denied = Crafted.ipv6(TCP, CLIENT, SERVER, new byte[0], Crafted.tcpSyn(40000, 80, 0));
        assertThat(decide(brokenMeters, denied, port80Denied))
                .as("denied, in fail-open mode too")
                .isFalse();
    }

    /** An IPv6 SYN to port 80 behind the given destination-options chain (which ends in TCP). */
    private static byte[] synBehind(byte[] chain) throws Exception {
        return Crafted.ipv6(chain.length == 0 ? TCP : DEST_OPTS, CLIENT, SERVER, chain, Crafted.tcpSyn(40000, 80, 0));
    }

    /** Decides the packet as the loop does: the queue's copy of it in a batch slot. */
    private static boolean decide(PacketDecider decider, byte[] packet, Judge judge) {
        int copied = Math.min(packet.length, NfQueue.COPY_BYTES);
        ByteBuffer slot =
                ByteBuffer.allocateDirect(SLOT_DATA + NfQueue.COPY_BYTES).order(ByteOrder.nativeOrder());
        slot.put(SLOT_DATA, packet, 0, copied);
        return decider.allows(judge, slot, SLOT_DATA, copied, packet.length, false);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
