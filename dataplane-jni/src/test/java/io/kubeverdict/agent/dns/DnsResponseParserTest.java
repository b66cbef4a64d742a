// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.policy.IpAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Messages as servers write them and as nobody should: what is collected, and what is refused. */
class DnsResponseParserTest {
    private final DnsResponseParser parser = new DnsResponseParser();

    /** "name=address/ttl" per collected address, in answer order. */
    private List<String> addresses() {
        List<String> out = new ArrayList<>();
        for (int a = 0; a < parser.addressCount(); a++) {
            IpAddress ip = parser.addressFamily(a) == 4
                    ? IpAddress.v4((int) parser.addressLo(a))
                    : IpAddress.v6(parser.addressHi(a), parser.addressLo(a));
            out.add(parser.chainName(parser.addressChain(a)) + "=" + ip + "/" + parser.addressTtl(a));
        }
        return out;
    }

    private int parse(byte[] message) {
        // At an offset inside a larger buffer, in native order, as in a batch slot.
        ByteBuffer buf = ByteBuffer.allocateDirect(message.length + 40).order(ByteOrder.nativeOrder());
        buf.put(20, message);
        return parser.parse(buf, 20, message.length);
    }

    static Stream<Arguments> wellFormed() {
        return Stream.of(
                Arguments.of(
                        "one A, owner compressed to the question",
                        DnsMessages.response("api.test", 1)
                                .a("api.test", 30, "192.0.2.10")
                                .bytes(),
                        List.of("api.test=192.0.2.10/30")),
                Arguments.of(
                        "AAAA",
                        DnsMessages.response("api.test", 28)
                                .aaaa("api.test", 60, "2001:db8::10")
                                .bytes(),
                        List.of("api.test=2001:db8::10/60")),
                Arguments.of(
                        "uncompressed names, mixed case",
                        DnsMessages.uncompressed("API.Test", 1)
                                .a("api.TEST", 5, "192.0.2.1")
                                .bytes(),
                        List.of("api.test=192.0.2.1/5")),
                Arguments.of(
                        "several answers",
                        DnsMessages.response("web.svc.test", 1)
                                .a("web.svc.test", 10, "10.96.0.1")
                                .a("web.svc.test", 20, "10.96.0.2")
                                .a("web.svc.test", 30, "10.96.0.3")
                                .bytes(),
                        List.of("web.svc.test=10.96.0.1/10", "web.svc.test=10.96.0.2/20", "web.svc.test=10.96.0.3/30")),
                Arguments.of(
                        "a CNAME chain: the smallest TTL on the way",
                        DnsMessages.response("api.test", 1)
                                .cname("api.test", 300, "lb.cloud.example")
                                .cname("lb.cloud.example", 20, "edge-7.cdn.example")
                                .a("edge-7.cdn.example", 60, "198.51.100.7")
                                .bytes(),
                        List.of("edge-7.cdn.example=198.51.100.7/20")),
                Arguments.of(
                        "a chain written out of order",
                        DnsMessages.response("api.test", 1)
                                .a("edge.cdn.example", 60, "198.51.100.8")
                                .cname("lb.cloud.example", 50, "edge.cdn.example")
                                .cname("api.test", 40, "lb.cloud.example")
                                .bytes(),
                        List.of("edge.cdn.example=198.51.100.8/40")),
                Arguments.of(
                        "answers for names off the chain are not collected",
                        DnsMessages.response("api.test", 1)
                                .a("api.test", 30, "192.0.2.10")
                                .a("evil.example", 30, "203.0.113.6")
                                .bytes(),
                        List.of("api.test=192.0.2.10/30")),
                Arguments.of(
                        "a CNAME loop ends the chain",
                        DnsMessages.response("a.test", 1)
                                .cname("a.test", 30, "b.test")
                                .cname("b.test", 30, "a.test")
                                .a("b.test", 30, "192.0.2.2")
                                .bytes(),
                        List.of("b.test=192.0.2.2/30")),
                Arguments.of(
                        "other classes and types are skipped",
                        DnsMessages.response("api.test", 1)
                                .record("api.test", 1, 3, 30, new byte[] {1, 2, 3, 4})
                                .record("api.test", 16, 1, 30, new byte[] {3, 'a', 'b', 'c'})
                                .a("api.test", 30, "192.0.2.3")
                                .bytes(),
                        List.of("api.test=192.0.2.3/30")),
                Arguments.of(
                        "a TTL with the top bit set counts as zero",
                        DnsMessages.response("api.test", 1)
                                .a("api.test", 0x8000_0001L, "192.0.2.4")
                                .bytes(),
                        List.of("api.test=192.0.2.4/0")),
                Arguments.of(
                        "NXDOMAIN: no answers",
                        DnsMessages.withFlags(0x8183, 1, "nope.test").bytes(),
                        List.of()),
                Arguments.of(
                        "authority and additional sections are never collected",
                        DnsMessages.response("api.test", 1)
                                .a("api.test", 30, "192.0.2.5")
                                .a("ns.test", 30, "192.0.2.53")
                                .announce(1)
                                .bytes(),
                        List.of("api.test=192.0.2.5/30")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wellFormed")
    void collectsTheChainsAddresses(String what, byte[] message, List<String> expected) {
        assertThat(parse(message)).isEqualTo(DnsResponseParser.OK);
        assertThat(addresses()).containsExactlyElementsOf(expected);
    }

    @Test
    void fiftyAnswersWithCnameChains() {
        DnsMessages m = DnsMessages.response("www.svc.test", 1)
                .cname("www.svc.test", 120, "pool.svc.test")
                .cname("pool.svc.test", 90, "pool-2.lb.test");
        for (int i = 0; i < 48; i++) {
            m.a("pool-2.lb.test", 100 + i, "10.97.0." + (i + 1));
        }
        assertThat(parse(m.bytes())).isEqualTo(DnsResponseParser.OK);
        assertThat(parser.answerCount()).isEqualTo(50);
        assertThat(parser.addressCount()).isEqualTo(48);
        assertThat(parser.chainCount()).isEqualTo(3);
        assertThat(parser.chainName(0)).isEqualTo("www.svc.test");
        assertThat(parser.chainParent(2)).isEqualTo(1);
        assertThat(addresses()).allMatch(a -> a.endsWith("/90")).contains("pool-2.lb.test=10.97.0.48/90");
    }

    @Test
    void recordsBeyondTheLimitAreSkippedAndCounted() {
        DnsMessages m = DnsMessages.response("big.test", 1);
        for (int i = 0; i < DnsResponseParser.MAX_RECORDS + 3; i++) {
            m.a("big.test", 30, "10.98." + (i / 250) + "." + (i % 250 + 1));
        }
        assertThat(parse(m.bytes())).isEqualTo(DnsResponseParser.OK);
        assertThat(parser.addressCount()).isEqualTo(DnsResponseParser.MAX_RECORDS);
        assertThat(parser.skippedRecords()).isEqualTo(3);
    }

    static Stream<Arguments> refused() {
        byte[] good = DnsMessages.response("api.test", 1)
                .a("api.test", 30, "192.0.2.10")
                .bytes();
        byte[] cut = java.util.Arrays.copyOf(good, good.length - 2);
        byte[] selfPointer = DnsMessages.response("api.test", 1)
                .raw(0xC0, 26)
                .u16(1)
                .u16(1)
                .u32(30)
                .u16(4)
                .raw(1, 2, 3, 4)
                .announce(1)
                .bytes(); // owner at 26 points at itself
        byte[] forward = DnsMessages.response("api.test", 1)
                .raw(0xC0, 60)
                .u16(1)
                .u16(1)
                .u32(30)
                .u16(4)
                .raw(1, 2, 3, 4)
                .announce(1)
                .bytes();
        StringBuilder longName = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            longName.append("a".repeat(50)).append('.');
        }
        longName.append("test"); // 259 octets on the wire
        return Stream.of(
                Arguments.of(
                        "a query",
                        DnsMessages.withFlags(0x0100, 1, "api.test").bytes(),
                        DnsResponseParser.NOT_A_RESPONSE),
                Arguments.of(
                        "a NOTIFY response (opcode 4)",
                        DnsMessages.withFlags(0xA000, 1, "api.test").bytes(),
                        DnsResponseParser.NOT_A_RESPONSE),
                Arguments.of(
                        "TC set", DnsMessages.withFlags(0x8380, 1, "api.test").bytes(), DnsResponseParser.TRUNCATED),
                Arguments.of(
                        "shorter than a header",
                        new byte[] {(byte) 0x81, (byte) 0x80, 0, 1},
                        DnsResponseParser.TRUNCATED),
                Arguments.of(
                        "two questions",
                        DnsMessages.withFlags(0x8180, 2, "api.test").bytes(),
                        DnsResponseParser.UNSUPPORTED),
                Arguments.of(
                        "no question",
                        DnsMessages.withFlags(0x8180, 0, "api.test").bytes(),
                        DnsResponseParser.UNSUPPORTED),
                Arguments.of("an answer cut short", cut, DnsResponseParser.TRUNCATED),
                Arguments.of(
                        "more answers announced than present",
                        DnsMessages.response("api.test", 1)
                                .a("api.test", 30, "192.0.2.10")
                                .announce(2)
                                .bytes(),
                        DnsResponseParser.TRUNCATED),
                Arguments.of("a pointer to itself", selfPointer, DnsResponseParser.MALFORMED),
                Arguments.of("a pointer forward", forward, DnsResponseParser.MALFORMED),
                Arguments.of(
                        "an A record of 5 bytes",
                        DnsMessages.response("api.test", 1)
                                .record("api.test", 1, 1, 30, new byte[5])
                                .bytes(),
                        DnsResponseParser.MALFORMED),
                Arguments.of(
                        "a label holding a dot",
                        DnsMessages.response("api.test", 1)
                                .raw(4, 'a', '.', 'p', 'i', 0)
                                .u16(1)
                                .u16(1)
                                .u32(30)
                                .u16(4)
                                .raw(1, 2, 3, 4)
                                .announce(1)
                                .bytes(),
                        DnsResponseParser.MALFORMED),
                Arguments.of(
                        "an extended label type",
                        DnsMessages.response("api.test", 1)
                                .raw(0x41, 0)
                                .u16(1)
                                .u16(1)
                                .u32(30)
                                .u16(4)
                                .raw(1, 2, 3, 4)
                                .announce(1)
                                .bytes(),
                        DnsResponseParser.MALFORMED),
                Arguments.of(
                        "a name over 255 octets",
                        DnsMessages.response(longName.toString(), 1).bytes(),
                        DnsResponseParser.MALFORMED),
                Arguments.of(
                        "a CNAME whose name overruns its rdata",
                        DnsMessages.response("api.test", 1)
                                .record("api.test", 5, 1, 30, new byte[] {3, 'a', 'b', 'c', 0, 0})
                                .bytes(),
                        DnsResponseParser.MALFORMED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusesWhatIsNoWellFormedResponse(String what, byte[] message, int expected) {
        assertThat(parse(message)).isEqualTo(expected);
        assertThat(parser.addressCount()).isZero();
        assertThat(parser.chainCount()).isZero();
    }

    @Test
    void neverReadsOutsideItsRange() {
        byte[] good = DnsMessages.response("api.test", 1)
                .a("api.test", 30, "192.0.2.10")
                .bytes();
        ByteBuffer exact = ByteBuffer.wrap(good);
        assertThat(parser.parse(exact, 0, good.length)).isEqualTo(DnsResponseParser.OK);
        assertThat(parser.parse(exact, 1, good.length)).isEqualTo(DnsResponseParser.MALFORMED);
        assertThat(parser.parse(exact, -1, 4)).isEqualTo(DnsResponseParser.MALFORMED);
        for (int n = 0; n < good.length; n++) {
            assertThat(parser.parse(exact, 0, n)).as("first %d bytes", n).isNotEqualTo(DnsResponseParser.OK);
        }
    }
}
