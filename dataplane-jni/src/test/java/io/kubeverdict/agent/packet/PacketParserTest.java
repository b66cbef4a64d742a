// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.packet;

import static io.kubeverdict.agent.packet.Packets.concat;
import static io.kubeverdict.agent.packet.Packets.extension;
import static io.kubeverdict.agent.packet.Packets.fragment;
import static io.kubeverdict.agent.packet.Packets.ipv4;
import static io.kubeverdict.agent.packet.Packets.ipv6;
import static io.kubeverdict.agent.packet.Packets.ports;
import static io.kubeverdict.agent.packet.Packets.v4;
import static io.kubeverdict.agent.packet.Packets.v6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Tuple;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PacketParserTest {
    private static final byte[] A4 = v4(10, 1, 2, 3);
    private static final byte[] B4 = v4(192, 168, 200, 250);
    private static final byte[] A6 = v6(1);
    private static final byte[] B6 = v6(0xfe);

    /** name, packet, bytes copied (-1 = all), expected result, family, protocol, port. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("v4 tcp", ipv4(6, 5, 0, A4, B4, ports(40000, 80, 20)), -1, PacketParser.OK, 4, 6, 80),
                Arguments.of("v4 udp", ipv4(17, 5, 0, A4, B4, ports(40000, 53, 8)), -1, PacketParser.OK, 4, 17, 53),
                Arguments.of("v4 sctp", ipv4(132, 5, 0, A4, B4, ports(5000, 81, 12)), -1, PacketParser.OK, 4, 132, 81),
                Arguments.of(
                        "v4 icmp",
                        ipv4(1, 5, 0, A4, B4, new byte[] {8, 0, 0, 0, 0, 1, 0, 1}),
                        -1,
                        PacketParser.OK,
                        4,
                        1,
                        0),
                Arguments.of(
                        "v4 options (IHL 15)",
                        ipv4(6, 15, 0, A4, B4, ports(1, 65535, 20)),
                        -1,
                        PacketParser.OK,
                        4,
                        6,
                        65535),
                Arguments.of(
                        "v4 later fragment: no port",
                        ipv4(6, 5, 185, A4, B4, new byte[] {0, 0x50, 0, 0x50}),
                        -1,
                        PacketParser.OK,
                        4,
                        6,
                        0),
                Arguments.of(
                        "v4 first fragment keeps its port",
                        ipv4(17, 5, 0, A4, B4, ports(1, 4789, 8)),
                        -1,
                        PacketParser.OK,
                        4,
                        17,
                        4789),
                Arguments.of(
                        "v4 other protocol (GRE)", ipv4(47, 5, 0, A4, B4, new byte[4]), -1, PacketParser.OK, 4, 47, 0),
                Arguments.of(
                        "v4 cut in the header",
                        ipv4(6, 5, 0, A4, B4, ports(1, 80, 20)),
                        19,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v4 cut before the port",
                        ipv4(6, 5, 0, A4, B4, ports(1, 80, 20)),
                        23,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v4 options beyond the copy",
                        ipv4(6, 15, 0, A4, B4, ports(1, 80, 20)),
                        60,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v4 IHL 4 is malformed",
                        ipv4(6, 4, 0, A4, B4, ports(1, 80, 24)),
                        -1,
                        PacketParser.MALFORMED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "version 5 is malformed",
                        concat(new byte[] {0x50}, new byte[40]),
                        -1,
                        PacketParser.MALFORMED,
                        0,
                        0,
                        0),
                Arguments.of("empty", new byte[0], -1, PacketParser.TRUNCATED, 0, 0, 0),
                Arguments.of("v6 tcp", ipv6(6, A6, B6, ports(40000, 8080, 20)), -1, PacketParser.OK, 6, 6, 8080),
                Arguments.of("v6 udp", ipv6(17, A6, B6, ports(40000, 81, 8)), -1, PacketParser.OK, 6, 17, 81),
                Arguments.of("v6 sctp", ipv6(132, A6, B6, ports(40000, 80, 12)), -1, PacketParser.OK, 6, 132, 80),
                Arguments.of(
                        "v6 icmpv6", ipv6(58, A6, B6, new byte[] {(byte) 128, 0, 0, 0}), -1, PacketParser.OK, 6, 58, 0),
                Arguments.of(
                        "v6 hop-by-hop then tcp",
                        ipv6(0, A6, B6, concat(extension(6, 0, 8), ports(1, 443, 20))),
                        -1,
                        PacketParser.OK,
                        6,
                        6,
                        443),
                Arguments.of(
                        "v6 hbh, dest-opts(16), routing(24), udp",
                        ipv6(
                                0,
                                A6,
                                B6,
                                concat(
                                        extension(60, 0, 8),
                                        extension(43, 1, 16),
                                        extension(17, 2, 24),
                                        ports(1, 53, 8))),
                        -1,
                        PacketParser.OK,
                        6,
                        17,
                        53),
                Arguments.of(
                        "v6 AH then tcp",
                        ipv6(51, A6, B6, concat(extension(6, 2, 16), ports(1, 22, 20))),
                        -1,
                        PacketParser.OK,
                        6,
                        6,
                        22),
                Arguments.of(
                        "v6 first fragment keeps its port",
                        ipv6(44, A6, B6, concat(fragment(17, 0, true), ports(1, 53, 8))),
                        -1,
                        PacketParser.OK,
                        6,
                        17,
                        53),
                Arguments.of(
                        "v6 later fragment: no port",
                        ipv6(44, A6, B6, concat(fragment(6, 100, false), new byte[16])),
                        -1,
                        PacketParser.OK,
                        6,
                        6,
                        0),
                Arguments.of("v6 no next header", ipv6(59, A6, B6, new byte[0]), -1, PacketParser.OK, 6, 59, 0),
                Arguments.of(
                        "v6 cut in the fixed header",
                        ipv6(6, A6, B6, ports(1, 80, 20)),
                        39,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 extensions beyond 128 copied bytes",
                        ipv6(0, A6, B6, concat(extension(60, 10, 88), extension(6, 0, 8), ports(1, 80, 20))),
                        128,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 extension header cut",
                        ipv6(0, A6, B6, extension(6, 0, 8)),
                        41,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 endless extension chain",
                        ipv6(
                                0,
                                A6,
                                B6,
                                concat(
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8),
                                        extension(0, 0, 8))),
                        -1,
                        PacketParser.TOO_MANY_HEADERS,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 nine extension headers",
                        ipv6(
                                60,
                                A6,
                                B6,
                                concat(
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(60, 0, 8),
                                        extension(6, 0, 8),
                                        ports(1, 80, 20))),
                        -1,
                        PacketParser.TOO_MANY_HEADERS,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 one extension header of 2048 bytes",
                        ipv6(60, A6, B6, concat(extension(6, 255, 2048), ports(1, 80, 20))),
                        -1,
                        PacketParser.OK,
                        6,
                        6,
                        80),
                Arguments.of(
                        "v6 AH cut",
                        ipv6(51, A6, B6, concat(extension(6, 4, 24), ports(1, 80, 20))),
                        60,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 fragment header cut",
                        ipv6(44, A6, B6, concat(fragment(6, 0, true), ports(1, 80, 20))),
                        47,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0),
                Arguments.of(
                        "v6 chain ends one byte short of the port",
                        ipv6(60, A6, B6, concat(extension(6, 1, 16), ports(1, 80, 20))),
                        40 + 16 + 3,
                        PacketParser.TRUNCATED,
                        0,
                        0,
                        0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void parses(String name, byte[] packet, int copied, int result, int family, int protocol, int port) {
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            // at an offset inside a larger direct buffer, as in a PacketBatch slot
            ByteBuffer buf = ByteBuffer.allocateDirect(16 + packet.length + 8).order(order);
            buf.put(16, packet, 0, packet.length);
            PacketTuple t = new PacketTuple();
            int length = copied < 0 ? packet.length : copied;
            assertThat(PacketParser.parse(buf, 16, length, t))
                    .as(name + " " + order)
                    .isEqualTo(result);
            if (result == PacketParser.OK) {
                assertThat(t.family).isEqualTo(family);
                assertThat(t.protocol).isEqualTo(protocol);
                assertThat(t.dstPort).isEqualTo(port);
            }
        }
    }

    /** Extension chains benign senders use, and the audit's padded SYN (H4), all shorter than the copy. */
    static Stream<Arguments> chainsWithinTheCopy() {
        byte[] eightHeaders = ports(1, 80, 20);
        for (int i = 0; i < 8; i++) {
            eightHeaders = concat(extension(i == 0 ? 6 : 60, 0, 8), eightHeaders);
        }
        return Stream.of(
                Arguments.of(
                        "dest-opts of 104 bytes (one skip-me option)",
                        ipv6(60, A6, B6, concat(extension(6, 12, 104), ports(1, 80, 20)))),
                Arguments.of(
                        "hbh, dest-opts, routing with 16 segments, fragment, dest-opts",
                        ipv6(
                                0,
                                A6,
                                B6,
                                concat(
                                        extension(60, 0, 8),
                                        extension(43, 1, 16),
                                        extension(44, 32, 264),
                                        fragment(60, 0, true),
                                        extension(6, 0, 8),
                                        ports(1, 80, 20)))),
                Arguments.of("eight extension headers", ipv6(60, A6, B6, eightHeaders)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("chainsWithinTheCopy")
    void readsTheTransportHeaderBehindAChainTheQueueCopiesWhole(String name, byte[] packet) {
        ByteBuffer buf = ByteBuffer.allocateDirect(NfQueue.COPY_BYTES);
        int copied = Math.min(packet.length, NfQueue.COPY_BYTES);
        buf.put(0, packet, 0, copied);
        PacketTuple t = new PacketTuple();
        assertThat(PacketParser.parse(buf, 0, copied, t))
                .as(PacketParser.describe(PacketParser.parse(buf, 0, copied, t)))
                .isEqualTo(PacketParser.OK);
        assertThat(t.protocol).isEqualTo(6);
        assertThat(t.dstPort).isEqualTo(80);
    }

    @Test
    void readsTheSourcePortForObserveAndClearsItWithoutPorts() {
        PacketTuple t = new PacketTuple();
        ByteBuffer v4 = ByteBuffer.wrap(ipv4(6, 5, 0, A4, B4, ports(40000, 80, 20)));
        assertThat(PacketParser.parse(v4, 0, v4.capacity(), t)).isEqualTo(PacketParser.OK);
        assertThat(t.srcPort).isEqualTo(40000);
        assertThat(t.toTuple().getSrcPort()).isEqualTo(40000);
        ByteBuffer v6 = ByteBuffer.wrap(ipv6(17, A6, B6, ports(65535, 53, 8)));
        assertThat(PacketParser.parse(v6, 0, v6.capacity(), t)).isEqualTo(PacketParser.OK);
        assertThat(t.srcPort).isEqualTo(65535);
        ByteBuffer later = ByteBuffer.wrap(ipv4(6, 5, 185, A4, B4, new byte[] {0, 0x50, 0, 0x50}));
        assertThat(PacketParser.parse(later, 0, later.capacity(), t)).isEqualTo(PacketParser.OK);
        assertThat(t.srcPort).as("a later fragment has no ports").isZero();
        assertThat(t.toTuple().hasField(Tuple.getDescriptor().findFieldByName("src_port")))
                .isFalse();
    }

    @Test
    void tellsHeadersBeyondTheCopyFromAPacketThatEndsEarly() {
        byte[] packet = ipv6(60, A6, B6, concat(extension(6, 79, 640), ports(1, 80, 20)));
        ByteBuffer buf = ByteBuffer.allocateDirect(NfQueue.COPY_BYTES);
        buf.put(0, packet, 0, NfQueue.COPY_BYTES);
        PacketTuple t = new PacketTuple();
        assertThat(PacketParser.parse(buf, 0, NfQueue.COPY_BYTES, packet.length, t))
                .isEqualTo(PacketParser.BEYOND_COPY);
        assertThat(PacketParser.parse(buf, 0, NfQueue.COPY_BYTES, NfQueue.COPY_BYTES, t))
                .as("the packet ends where the copy does")
                .isEqualTo(PacketParser.TRUNCATED);
        assertThat(PacketParser.describe(PacketParser.BEYOND_COPY)).isEqualTo("beyond_copy");
    }

    @Test
    void fillsIpv4AddressesInTheLowBits() {
        PacketTuple t = new PacketTuple();
        t.srcHi = -1;
        ByteBuffer buf = ByteBuffer.wrap(ipv4(6, 5, 0, A4, B4, ports(1, 80, 20)));
        assertThat(PacketParser.parse(buf, 0, buf.capacity(), t)).isEqualTo(PacketParser.OK);
        assertThat(t.srcHi).isZero();
        assertThat(t.srcLo).isEqualTo(0x0a010203L);
        assertThat(t.dstHi).isZero();
        assertThat(t.dstLo).isEqualTo(0xc0a8c8faL);
    }

    @Test
    void fillsIpv6AddressesAsTwoLongs() {
        PacketTuple t = new PacketTuple();
        ByteBuffer buf = ByteBuffer.allocateDirect(100).order(ByteOrder.LITTLE_ENDIAN);
        byte[] p = ipv6(17, A6, B6, ports(1, 80, 8));
        buf.put(0, p, 0, p.length);
        assertThat(PacketParser.parse(buf, 0, p.length, t)).isEqualTo(PacketParser.OK);
        assertThat(t.srcHi).isEqualTo(0xfd00000000000000L);
        assertThat(t.srcLo).isEqualTo(1L);
        assertThat(t.dstHi).isEqualTo(0xfd00000000000000L);
        assertThat(t.dstLo).isEqualTo(0xfeL);
    }

    @Test
    void neverThrowsOnRandomBytes() {
        Random random = new Random(42);
        PacketTuple t = new PacketTuple();
        ByteBuffer buf = ByteBuffer.allocateDirect(128);
        int[] results = new int[3];
        for (int i = 0; i < 200_000; i++) {
            byte[] junk = new byte[random.nextInt(129)];
            random.nextBytes(junk);
            if (junk.length > 0 && random.nextBoolean()) {
                junk[0] = (byte) ((random.nextBoolean() ? 0x40 : 0x60) | (junk[0] & 0x0f));
            }
            buf.put(0, junk, 0, junk.length);
            results[PacketParser.parse(buf, 0, junk.length, t)]++;
        }
        assertThat(Arrays.stream(results).allMatch(n -> n > 0))
                .as(Arrays.toString(results))
                .isTrue();
    }

    @Test
    void rejectsALengthBeyondTheBuffer() {
        assertThat(PacketParser.parse(ByteBuffer.allocate(10), 4, 20, new PacketTuple()))
                .isEqualTo(PacketParser.MALFORMED);
    }

    @Test
    void rejectsALengthWhoseEndOverflows() {
        // offset + length wraps negative: it once passed the bounds check and read past the buffer.
        ByteBuffer buf = ByteBuffer.allocate(32).put(16, (byte) 0x60);
        assertThat(PacketParser.parse(buf, 16, Integer.MAX_VALUE, new PacketTuple()))
                .isEqualTo(PacketParser.MALFORMED);
        assertThat(PacketParser.parse(buf, 40, 1, new PacketTuple())).isEqualTo(PacketParser.MALFORMED);
    }
}
