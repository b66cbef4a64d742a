// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.packet;

import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Protocol;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Reads the IP and transport headers of one packet (the first bytes NFQUEUE copied) into a
 * {@link PacketTuple}, without allocating and without throwing on any input.
 *
 * <p>IPv4: the header length comes from IHL; a non-first fragment carries no transport header,
 * so its port is 0. IPv6: hop-by-hop, routing, fragment, destination-options and AH extension
 * headers are walked within the copied bytes. TCP, UDP and SCTP fill the destination port;
 * ICMP, ICMPv6 and every other protocol leave it 0 ({@link PacketTuple#dstPort} 0 = no port).
 * The result says whether the tuple is complete; when it is not, the tuple's content is undefined
 * and the packet is unreadable: the verdict loop drops it, whatever its fail mode (a sender chooses
 * its headers, so an unreadable packet must never be a way past the policy).
 */
public final class PacketParser {
    /** The tuple is complete. */
    public static final int OK = 0;
    /** The copied bytes end before the headers needed for the tuple. */
    public static final int TRUNCATED = 1;
    /** Not IPv4/IPv6, or a header field is impossible (IHL &lt; 5, ...). */
    public static final int MALFORMED = 2;
    /** More IPv6 extension headers than {@link #MAX_EXTENSION_HEADERS}. */
    public static final int TOO_MANY_HEADERS = 3;
    /**
     * The headers needed go on past the bytes copied, although the packet itself is longer: the
     * queue's copy range was too short for them ({@link #parse(ByteBuffer, int, int, int, PacketTuple)}).
     */
    public static final int BEYOND_COPY = 4;
    /** Result codes are 0 .. RESULTS - 1. */
    public static final int RESULTS = 5;

    // The contract's protocol numbers, as constants the switch below can use.
    public static final int PROTO_ICMP = Protocol.ICMP_VALUE;
    public static final int PROTO_TCP = Protocol.TCP_VALUE;
    public static final int PROTO_UDP = Protocol.UDP_VALUE;
    public static final int PROTO_ICMPV6 = Protocol.ICMPV6_VALUE;
    public static final int PROTO_SCTP = Protocol.SCTP_VALUE;

    private static final int IPV6_HOP_BY_HOP = 0;
    private static final int IPV6_ROUTING = 43;
    private static final int IPV6_FRAGMENT = 44;
    private static final int IPV6_AH = 51;
    private static final int IPV6_DEST_OPTS = 60;
    /** IPv6 extension headers walked before the transport header at most; more is TOO_MANY_HEADERS. */
    public static final int MAX_EXTENSION_HEADERS = 8;

    private PacketParser() {}

    /** Human-readable name of a result code, for logs and metric tags. */
    public static String describe(int result) {
        switch (result) {
            case OK:
                return "ok";
            case TRUNCATED:
                return "truncated";
            case MALFORMED:
                return "malformed";
            case TOO_MANY_HEADERS:
                return "too_many_headers";
            case BEYOND_COPY:
                return "beyond_copy";
            default:
                return "unknown";
        }
    }

    /**
     * Parses the {@code copied} bytes of a packet of {@code length} bytes in all, as a queue hands
     * them over: like {@link #parse(ByteBuffer, int, int, PacketTuple)}, but a packet whose headers
     * run past the copy, while the packet goes on, is {@link #BEYOND_COPY} rather than TRUNCATED.
     */
    public static int parse(ByteBuffer buf, int offset, int copied, int length, PacketTuple out) {
        int result = parse(buf, offset, copied, out);
        return result == TRUNCATED && copied < length ? BEYOND_COPY : result;
    }

    /**
     * Parses {@code length} bytes of {@code buf} starting at {@code offset} (absolute reads; the
     * buffer's position, limit and byte order do not matter and are not changed).
     */
    public static int parse(ByteBuffer buf, int offset, int length, PacketTuple out) {
        if (length < 1 || offset < 0 || length > buf.capacity() - offset) { // no int overflow
            return length < 1 ? TRUNCATED : MALFORMED;
        }
        int version = (buf.get(offset) & 0xff) >>> 4;
        if (version == 4) {
            return parseIpv4(buf, offset, length, out);
        }
        if (version == 6) {
            return parseIpv6(buf, offset, length, out);
        }
        return MALFORMED;
    }

    private static int parseIpv4(ByteBuffer buf, int offset, int length, PacketTuple out) {
        if (length < 20) {
            return TRUNCATED;
        }
        int headerLength = (buf.get(offset) & 0x0f) * 4;
        if (headerLength < 20) {
            return MALFORMED;
        }
        out.family = 4;
        out.srcHi = 0;
        out.srcLo = be32(buf, offset + 12) & 0xffffffffL;
        out.dstHi = 0;
        out.dstLo = be32(buf, offset + 16) & 0xffffffffL;
        out.protocol = buf.get(offset + 9) & 0xff;
        out.dstPort = 0;
        out.srcPort = 0;
        int fragmentOffset = be16(buf, offset + 6) & 0x1fff;
        if (fragmentOffset != 0) {
            return OK; // a later fragment: no transport header in it
        }
        return transport(buf, offset + headerLength, offset + length, out);
    }

    private static int parseIpv6(ByteBuffer buf, int offset, int length, PacketTuple out) {
        if (length < 40) {
            return TRUNCATED;
        }
        out.family = 6;
        out.srcHi = be64(buf, offset + 8);
        out.srcLo = be64(buf, offset + 16);
        out.dstHi = be64(buf, offset + 24);
        out.dstLo = be64(buf, offset + 32);
        out.dstPort = 0;
        out.srcPort = 0;
        int end = offset + length;
        int next = buf.get(offset + 6) & 0xff;
        int at = offset + 40;
        for (int i = 0; i <= MAX_EXTENSION_HEADERS; i++) {
            switch (next) {
                case IPV6_HOP_BY_HOP:
                case IPV6_ROUTING:
                case IPV6_DEST_OPTS:
                case IPV6_AH: {
                    if (at + 2 > end) {
                        return TRUNCATED;
                    }
                    int size =
                            next == IPV6_AH ? ((buf.get(at + 1) & 0xff) + 2) * 4 : ((buf.get(at + 1) & 0xff) + 1) * 8;
                    next = buf.get(at) & 0xff;
                    at += size;
                    break;
                }
                case IPV6_FRAGMENT: {
                    if (at + 8 > end) {
                        return TRUNCATED;
                    }
                    int fragmentOffset = (be16(buf, at + 2) & 0xffff) >>> 3;
                    next = buf.get(at) & 0xff;
                    at += 8;
                    if (fragmentOffset != 0) {
                        out.protocol = next;
                        return OK; // a later fragment: no transport header in it
                    }
                    break;
                }
                default:
                    out.protocol = next;
                    return transport(buf, at, end, out);
            }
        }
        return TOO_MANY_HEADERS; // more than any sane packet has
    }

    private static int transport(ByteBuffer buf, int at, int end, PacketTuple out) {
        switch (out.protocol) {
            case PROTO_TCP:
            case PROTO_UDP:
            case PROTO_SCTP:
                // source port, then destination port: the first 4 bytes of all three headers
                if (at + 4 > end) {
                    return TRUNCATED;
                }
                out.srcPort = be16(buf, at) & 0xffff;
                out.dstPort = be16(buf, at + 2) & 0xffff;
                return OK;
            default:
                return OK; // ICMP, ICMPv6 and others have no port
        }
    }

    private static int be16(ByteBuffer buf, int at) {
        short v = buf.getShort(at);
        return buf.order() == ByteOrder.BIG_ENDIAN ? v : Short.reverseBytes(v);
    }

    private static int be32(ByteBuffer buf, int at) {
        int v = buf.getInt(at);
        return buf.order() == ByteOrder.BIG_ENDIAN ? v : Integer.reverseBytes(v);
    }

    private static long be64(ByteBuffer buf, int at) {
        long v = buf.getLong(at);
        return buf.order() == ByteOrder.BIG_ENDIAN ? v : Long.reverseBytes(v);
    }
}
