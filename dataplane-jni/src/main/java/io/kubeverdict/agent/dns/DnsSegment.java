// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.nio.ByteBuffer;

/**
 * Where the DNS bytes of a queued response packet are: its IP and UDP/TCP headers read (without
 * allocating, absolute reads, never past the copied length) into this reused holder — source
 * and destination (address and port), the transport, and the payload range: an answer from port
 * 53 to a pod, or a pod's query to port 53. A TCP payload is located but
 * never parsed ({@link DnsLearner} does not learn from TCP).
 */
public final class DnsSegment {
    public static final int OK = 0;
    /** Not UDP/TCP from or to port 53, or a later fragment: nothing to read. */
    public static final int NOT_DNS = 1;

    public static final int TRUNCATED = 2;
    public static final int MALFORMED = 3;

    public static final int UDP = 17;
    public static final int TCP = 6;
    public static final int DNS_PORT = 53;

    public int family;
    public long srcHi;
    public long srcLo;
    public int srcPort;
    public int dstPort;
    public long dstHi;
    public long dstLo;
    public int protocol;
    public int payloadOffset;
    public int payloadLength;

    /** Reads the headers of the packet at buf[offset, offset + length). */
    public int locate(ByteBuffer buf, int offset, int length) {
        if (offset < 0 || length < 1 || length > buf.capacity() - offset) {
            return length < 1 ? TRUNCATED : MALFORMED;
        }
        int end = offset + length;
        int version = (buf.get(offset) & 0xff) >>> 4;
        int at;
        if (version == 4) {
            if (length < 20) {
                return TRUNCATED;
            }
            int ihl = (buf.get(offset) & 0x0f) * 4;
            if (ihl < 20) {
                return MALFORMED;
            }
            if ((u16(buf, offset + 6) & 0x3fff) != 0) {
                return NOT_DNS; // a fragment (conntrack reassembles before our hooks; count it if not)
            }
            family = 4;
            srcHi = 0;
            srcLo = u32(buf, offset + 12);
            dstHi = 0;
            dstLo = u32(buf, offset + 16);
            protocol = buf.get(offset + 9) & 0xff;
            end = Math.min(end, offset + Math.max(u16(buf, offset + 2), ihl));
            at = offset + ihl;
        } else if (version == 6) {
            if (length < 40) {
                return TRUNCATED;
            }
            family = 6;
            srcHi = u32(buf, offset + 8) << 32 | u32(buf, offset + 12);
            srcLo = u32(buf, offset + 16) << 32 | u32(buf, offset + 20);
            dstHi = u32(buf, offset + 24) << 32 | u32(buf, offset + 28);
            dstLo = u32(buf, offset + 32) << 32 | u32(buf, offset + 36);
            protocol = buf.get(offset + 6) & 0xff;
            end = Math.min(end, offset + 40 + u16(buf, offset + 4));
            at = offset + 40; // responses carry no extension headers; any other next header is not ours
        } else {
            return MALFORMED;
        }
        if (at > end) {
            return MALFORMED;
        }
        if (protocol == UDP) {
            if (at + 8 > end) {
                return TRUNCATED;
            }
            srcPort = u16(buf, at);
            dstPort = u16(buf, at + 2);
            if (srcPort != DNS_PORT && dstPort != DNS_PORT) {
                return NOT_DNS;
            }
            int udpLength = u16(buf, at + 4);
            if (udpLength < 8) {
                return MALFORMED;
            }
            payloadOffset = at + 8;
            int declaredEnd = at + udpLength;
            if (declaredEnd > end) {
                return TRUNCATED; // the copy (or the packet) ends before the datagram does
            }
            payloadLength = declaredEnd - payloadOffset;
            return OK;
        }
        if (protocol == TCP) {
            if (at + 20 > end) {
                return TRUNCATED;
            }
            srcPort = u16(buf, at);
            dstPort = u16(buf, at + 2);
            if (srcPort != DNS_PORT && dstPort != DNS_PORT) {
                return NOT_DNS;
            }
            int dataOffset = ((buf.get(at + 12) & 0xff) >>> 4) * 4;
            if (dataOffset < 20) {
                return MALFORMED;
            }
            if (at + dataOffset > end) {
                return TRUNCATED;
            }
            payloadOffset = at + dataOffset;
            payloadLength = end - payloadOffset;
            return OK;
        }
        return NOT_DNS;
    }

    static int u16(ByteBuffer buf, int at) {
        return ((buf.get(at) & 0xff) << 8) | (buf.get(at + 1) & 0xff);
    }

    static long u32(ByteBuffer buf, int at) {
        return ((long) u16(buf, at) << 16) | u16(buf, at + 2);
    }
}
