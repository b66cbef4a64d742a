// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.nio.ByteBuffer;

/**
 * Decodes DNS names on the wire (RFC 1035 4.1.4) for {@link DnsResponseParser}, without
 * allocating and without throwing: lower-case dotted ASCII, no trailing dot. Compression pointers
 * must point strictly before the place they are read from, which ends every loop; a name longer
 * than 255 octets on the wire, a label type other than plain and pointer, or a label holding a
 * dot is malformed. Failures are the parser's result codes, negated.
 *
 * <p>Not thread-safe: belongs to one parser.
 */
final class DnsNameDecoder {
    private static final int MAX_POINTERS = 64;

    /** The dotted length of the last name decoded by {@link #decode}. */
    private int nameLength;

    /** The dotted length of the last name decoded. */
    int length() {
        return nameLength;
    }

    /**
     * Decodes the name at {@code at} into {@code out[outFrom..]} (lower-case dotted, no trailing
     * dot; {@link #length} set) and returns the position after it where it was read (a
     * pointer ends it), or minus a result code.
     */
    int decode(ByteBuffer buf, int base, int end, int at, byte[] out, int outFrom) {
        int length = 0;
        int wire = 0;
        int resume = -1;
        int pointers = 0;
        int limit = at; // a pointer must point before here
        while (true) {
            if (at >= end) {
                return -DnsResponseParser.TRUNCATED;
            }
            int len = buf.get(at) & 0xff;
            if (len == 0) {
                nameLength = length;
                return resume >= 0 ? resume : at + 1;
            }
            int kind = len & 0xC0;
            if (kind == 0xC0) {
                if (at + 2 > end) {
                    return -DnsResponseParser.TRUNCATED;
                }
                int target = base + (((len & 0x3F) << 8) | (buf.get(at + 1) & 0xff));
                if (target >= limit || ++pointers > MAX_POINTERS) {
                    return -DnsResponseParser.MALFORMED;
                }
                if (resume < 0) {
                    resume = at + 2;
                }
                limit = target;
                at = target;
                continue;
            }
            if (kind != 0) {
                return -DnsResponseParser.MALFORMED; // extended label types (RFC 6891 obsoleted them)
            }
            wire += len + 1;
            if (wire > 254 || at + 1 + len > end) {
                return wire > 254 ? -DnsResponseParser.MALFORMED : -DnsResponseParser.TRUNCATED;
            }
            if (length > 0) {
                out[outFrom + length++] = '.';
            }
            for (int i = 1; i <= len; i++) {
                int c = buf.get(at + i) & 0xff;
                if (c == '.') {
                    return -DnsResponseParser.MALFORMED;
                }
                if (c >= 'A' && c <= 'Z') {
                    c += 'a' - 'A';
                }
                out[outFrom + length++] = (byte) c;
            }
            at += 1 + len;
        }
    }
}
