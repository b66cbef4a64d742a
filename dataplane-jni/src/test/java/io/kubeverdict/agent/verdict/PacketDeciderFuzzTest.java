// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.testing.tier.Tiers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;

/**
 * Well-formed-looking packets, built from the fuzzer's choices: IPv4 with any IHL, fragment offset
 * and protocol; IPv6 with up to ten extension headers (hop-by-hop, routing, fragment, AH,
 * destination options) of any length; then a transport header; then cut anywhere, and copied as
 * the queue copies ({@link NfQueue#COPY_BYTES} at most). The builder knows where the port is, so
 * the parser's answer is checked against it; and the fail-open decider accepts a packet only
 * when it is readable and the judge allows it (H4: an unreadable packet never passes).
 */
@Tag(Tiers.FUZZ)
class PacketDeciderFuzzTest {
    private static final int[] EXTENSIONS = {0, 43, 44, 51, 60};
    private static final int[] PROTOCOLS = {6, 17, 132, 1, 58, 59, 50, 47};
    private static final int SLOT_DATA = 16;

    private final ByteBuffer slot =
            ByteBuffer.allocateDirect(SLOT_DATA + NfQueue.COPY_BYTES).order(ByteOrder.nativeOrder());
    private final PacketTuple tuple = new PacketTuple();
    private final PacketDecider failOpen = new PacketDecider(VerdictObserver.NONE, true);

    /** A built packet and what a reader of it must find. */
    private static final class Built {
        final ByteBuffer bytes = ByteBuffer.allocate(40 + 10 * 2048 + 20);
        int family;
        int protocol;
        int port;
        boolean malformed;
        /** Bytes needed, in order: a reader that has fewer than needs[i] stops at step i. */
        final int[] needs = new int[12];

        int steps;
        boolean tooManyHeaders;

        void need(int bytes) {
            needs[steps++] = bytes;
        }
    }

    @FuzzTest
    void anyHeaderChain(FuzzedDataProvider data) {
        Built p = data.consumeBoolean() ? ipv4(data) : ipv6(data);
        int full = p.bytes.position();
        int length = data.consumeInt(0, full);
        int copied = Math.min(length, NfQueue.COPY_BYTES);
        slot.put(SLOT_DATA, p.bytes.array(), 0, copied);

        int expected = expected(p, copied, length);
        int result = PacketParser.parse(slot, SLOT_DATA, copied, length, tuple);
        if (result != expected) { // the message only when needed: it is long
            assertThat(PacketParser.describe(result))
                    .as("packet %s cut to %d bytes", Arrays.toString(Arrays.copyOf(p.bytes.array(), full)), length)
                    .isEqualTo(PacketParser.describe(expected));
        }
        if (result == PacketParser.OK) {
            assertThat(tuple.family).isEqualTo(p.family);
            assertThat(tuple.protocol).isEqualTo(p.protocol);
            assertThat(tuple.dstPort).isEqualTo(p.port);
        }
        assertThat(failOpen.allows(t -> 1, slot, SLOT_DATA, copied, length, false))
                .as("accepted iff readable")
                .isEqualTo(result == PacketParser.OK);
        assertThat(failOpen.allows(t -> 0, slot, SLOT_DATA, copied, length, false))
                .as("denied")
                .isFalse();
    }

    private static int expected(Built p, int copied, int length) {
        for (int i = 0; i < p.steps; i++) {
            if (copied < p.needs[i]) {
                return copied < length ? PacketParser.BEYOND_COPY : PacketParser.TRUNCATED;
            }
            if (i == 0 && p.malformed) {
                return PacketParser.MALFORMED; // IHL below 5: known once the fixed header is there
            }
        }
        return p.tooManyHeaders ? PacketParser.TOO_MANY_HEADERS : PacketParser.OK;
    }

    private static Built ipv4(FuzzedDataProvider data) {
        Built p = new Built();
        p.family = 4;
        int ihl = data.consumeInt(0, 15);
        int fragmentOffset = data.consumeBoolean() ? 0 : data.consumeInt(1, 0x1fff);
        p.protocol = protocol(data);
        ByteBuffer b = p.bytes;
        b.put((byte) (0x40 | ihl)).put((byte) 0).putShort((short) 0).putInt(fragmentOffset);
        b.put((byte) 64)
                .put((byte) p.protocol)
                .putShort((short) 0)
                .putInt(0x0a000001)
                .putInt(0x0a000002);
        p.need(20);
        if (ihl < 5) {
            p.malformed = true;
            return p;
        }
        for (int i = 20; i < ihl * 4; i++) {
            b.put((byte) 1);
        }
        if (fragmentOffset == 0) {
            transport(data, p, ihl * 4);
        }
        return p;
    }

    private static Built ipv6(FuzzedDataProvider data) {
        Built p = new Built();
        p.family = 6;
        ByteBuffer b = p.bytes;
        int headers = data.consumeInt(0, 10);
        int[] types = new int[headers];
        for (int i = 0; i < headers; i++) {
            types[i] = data.pickValue(EXTENSIONS);
        }
        int last = protocol(data);
        b.putInt(0x60000000)
                .putShort((short) 0)
                .put((byte) (headers > 0 ? types[0] : last))
                .put((byte) 64);
        b.putLong(0xfd00000000000000L).putLong(1).putLong(0xfd00000000000000L).putLong(2);
        p.need(40);
        for (int i = 0; i < headers; i++) {
            if (i == PacketParser.MAX_EXTENSION_HEADERS + 1) {
                p.tooManyHeaders = true; // the reader gives up before this header
                return p;
            }
            int at = b.position();
            int next = i + 1 < headers ? types[i + 1] : last;
            if (types[i] == 44) {
                boolean later = data.consumeBoolean();
                int offset = later ? data.consumeInt(1, 0x1fff) : 0;
                b.put((byte) next)
                        .put((byte) 0)
                        .putShort((short) (offset << 3 | 1))
                        .putInt(42);
                p.need(at + 8);
                if (later) {
                    p.protocol = next;
                    return p; // a later fragment: no transport header to read
                }
            } else {
                int field = data.consumeInt(0, 255);
                int size = types[i] == 51 ? (field + 2) * 4 : (field + 1) * 8;
                b.put((byte) next).put((byte) field).put(new byte[size - 2]);
                p.need(at + 2);
            }
        }
        if (headers == PacketParser.MAX_EXTENSION_HEADERS + 1) {
            p.tooManyHeaders = true;
            return p;
        }
        p.protocol = last;
        transport(data, p, b.position());
        return p;
    }

    /** Any protocol but an extension header's number (which a reader would walk as one). */
    private static int protocol(FuzzedDataProvider data) {
        if (data.consumeBoolean()) {
            return data.pickValue(PROTOCOLS);
        }
        int any = data.consumeInt(0, 255);
        return Arrays.stream(EXTENSIONS).anyMatch(e -> e == any) ? 6 : any;
    }

    private static void transport(FuzzedDataProvider data, Built p, int at) {
        int port = data.consumeInt(0, 65535);
        p.bytes
                .putShort((short) data.consumeInt(0, 65535))
                .putShort((short) port)
                .put(new byte[16]);
        if (p.protocol == 6 || p.protocol == 17 || p.protocol == 132) {
            p.port = port;
            p.need(at + 4);
        }
    }
}
