// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.packet;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.testing.tier.Tiers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;

/**
 * Any bytes as NFQUEUE's copy of a packet, presented as the verdict loop presents them: never an
 * exception, nothing read past the copied length, and a tuple that agrees with its headers.
 *
 * <p>Over-reads show up twice: the bytes sit at the very end of a buffer (one byte further throws),
 * and in a batch slot whose bytes after the copy are filled with different canaries (the
 * result must not depend on them). Regression inputs: PacketParserFuzzTestInputs/anyCopiedBytes.
 */
@Tag(Tiers.FUZZ)
class PacketParserFuzzTest {
    // PacketBatch's slot layout (kv_layout.h): the packet at +16, COPY_BYTES copied at most, 8-aligned slots.
    private static final int DATA_OFFSET = 16;
    private static final int DATA_BYTES = NfQueue.COPY_BYTES;
    private static final int SLOT_SIZE = (DATA_OFFSET + DATA_BYTES + 7) & ~7;
    private static final int SLOTS = 3;

    private final PacketTuple tuple = new PacketTuple();
    private final PacketTuple other = new PacketTuple();
    private final ByteBuffer batch =
            ByteBuffer.allocateDirect(SLOTS * SLOT_SIZE).order(ByteOrder.nativeOrder());

    @FuzzTest
    void anyCopiedBytes(byte[] packet) {
        int result = parseAtTheEnd(packet, ByteOrder.BIG_ENDIAN, 0, tuple);
        assertThat(result)
                .isIn(PacketParser.OK, PacketParser.TRUNCATED, PacketParser.MALFORMED, PacketParser.TOO_MANY_HEADERS);
        if (result == PacketParser.OK) {
            checkConsistent(packet, tuple);
        }
        // Native order and an offset, as in a batch: the same answer.
        assertSameAnswer(result, parseAtTheEnd(packet, ByteOrder.nativeOrder(), DATA_OFFSET, other));

        // In a batch slot, as the shim leaves it: at most DATA_BYTES copied, canaries around.
        byte[] copied = Arrays.copyOf(packet, Math.min(packet.length, DATA_BYTES));
        int copiedResult = parseAtTheEnd(copied, ByteOrder.BIG_ENDIAN, 0, tuple);
        for (int slot = 0; slot < SLOTS; slot++) {
            for (byte canary : new byte[] {0, (byte) 0xff, 0x45}) {
                fill(copied, slot, canary);
                assertSameAnswer(
                        copiedResult, PacketParser.parse(batch, slot * SLOT_SIZE + DATA_OFFSET, copied.length, other));
            }
        }
    }

    /** Parses the bytes placed at the end of a buffer exactly that long, so one byte further throws. */
    private static int parseAtTheEnd(byte[] packet, ByteOrder order, int offset, PacketTuple out) {
        ByteBuffer buf = ByteBuffer.allocate(offset + packet.length).order(order);
        buf.put(offset, packet);
        buf.position(buf.limit()); // the parser must use absolute reads only
        return PacketParser.parse(buf, offset, packet.length, out);
    }

    /** Fills the batch with the canary, then copies the packet into one slot. */
    private void fill(byte[] copied, int slot, byte canary) {
        for (int i = 0; i < batch.capacity(); i++) {
            batch.put(i, canary);
        }
        batch.put(slot * SLOT_SIZE + DATA_OFFSET, copied);
    }

    /** The same result, and for OK the same tuple as {@link #tuple}. */
    private void assertSameAnswer(int expected, int result) {
        assertThat(result).as("result").isEqualTo(expected);
        if (result == PacketParser.OK) {
            assertThat(other.family).isEqualTo(tuple.family);
            assertThat(other.srcHi).isEqualTo(tuple.srcHi);
            assertThat(other.srcLo).isEqualTo(tuple.srcLo);
            assertThat(other.dstHi).isEqualTo(tuple.dstHi);
            assertThat(other.dstLo).isEqualTo(tuple.dstLo);
            assertThat(other.protocol).isEqualTo(tuple.protocol);
            assertThat(other.dstPort).isEqualTo(tuple.dstPort);
        }
    }

    /** What an OK tuple must say about the bytes it came from. */
    private static void checkConsistent(byte[] p, PacketTuple t) {
        int version = (p[0] & 0xff) >>> 4;
        assertThat(t.family).isEqualTo(version);
        assertThat(t.protocol).isBetween(0, 255);
        assertThat(t.dstPort).isBetween(0, 65535);
        if (t.dstPort != 0) {
            assertThat(t.protocol).as("only TCP, UDP and SCTP have ports").isIn(6, 17, 132);
        }
        if (version == 4) {
            assertThat(p.length).isGreaterThanOrEqualTo(20);
            assertThat(t.protocol).isEqualTo(p[9] & 0xff);
            assertThat(t.srcHi).isZero();
            assertThat(t.dstHi).isZero();
            assertThat(t.srcLo).isEqualTo(ByteBuffer.wrap(p, 12, 4).getInt() & 0xffffffffL);
            assertThat(t.dstLo).isEqualTo(ByteBuffer.wrap(p, 16, 4).getInt() & 0xffffffffL);
            int headerLength = (p[0] & 0x0f) * 4;
            boolean firstFragment = (ByteBuffer.wrap(p, 6, 2).getShort() & 0x1fff) == 0;
            if (firstFragment && (t.protocol == 6 || t.protocol == 17 || t.protocol == 132)) {
                assertThat(t.dstPort)
                        .isEqualTo(ByteBuffer.wrap(p, headerLength + 2, 2).getShort() & 0xffff);
            } else {
                assertThat(t.dstPort).isZero();
            }
        } else {
            assertThat(p.length).isGreaterThanOrEqualTo(40);
            ByteBuffer b = ByteBuffer.wrap(p);
            assertThat(new long[] {t.srcHi, t.srcLo, t.dstHi, t.dstLo})
                    .containsExactly(b.getLong(8), b.getLong(16), b.getLong(24), b.getLong(32));
        }
    }
}
