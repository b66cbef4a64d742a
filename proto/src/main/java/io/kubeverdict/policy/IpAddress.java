// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Optional;

/**
 * An IPv4 or IPv6 address as primitives: IPv4 lives in the low 32 bits of {@code lo} with
 * {@code hi == 0}, IPv6 is the 128-bit value {@code hi:lo}. Parsing is strict and never touches
 * DNS (unlike {@code InetAddress.getByName}), so a bad member string is rejected, not resolved.
 */
public record IpAddress(int family, long hi, long lo) {

    public static final int V4 = 4;
    public static final int V6 = 6;

    public static IpAddress v4(int address) {
        return new IpAddress(V4, 0, address & 0xFFFF_FFFFL);
    }

    public static IpAddress v6(long hi, long lo) {
        return new IpAddress(V6, hi, lo);
    }

    /** Parses a literal address; throws {@link IllegalArgumentException} when it is not one. */
    public static IpAddress parse(String text) {
        IpAddress a = tryParse(text);
        if (a == null) {
            throw new IllegalArgumentException("not an IP address: \"" + text + "\"");
        }
        return a;
    }

    /** The canonical text ({@link #toString}) of a literal address, or empty when it is not one. */
    public static Optional<String> canonical(String text) {
        return Optional.ofNullable(tryParse(text)).map(IpAddress::toString);
    }

    /** Parses a literal address, or returns null. */
    public static IpAddress tryParse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        if (text.indexOf(':') < 0) {
            long v = parseV4(text, 0, text.length());
            return v < 0 ? null : new IpAddress(V4, 0, v);
        }
        return parseV6(text);
    }

    /** The IPv4 value in the low 32 bits, or -1 when [from, to) is not a dotted quad. */
    static long parseV4(String s, int from, int to) {
        long value = 0;
        int octets = 0;
        int i = from;
        while (i <= to) {
            int start = i;
            int octet = 0;
            while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                octet = octet * 10 + (s.charAt(i) - '0');
                i++;
                if (i - start > 3) {
                    return -1;
                }
            }
            int len = i - start;
            // Leading zeros are rejected: some parsers read them as octal; never guess.
            if (len == 0 || octet > 255 || (len > 1 && s.charAt(start) == '0')) {
                return -1;
            }
            value = (value << 8) | octet;
            octets++;
            if (i == to) {
                break;
            }
            if (s.charAt(i) != '.' || octets == 4) {
                return -1;
            }
            i++;
        }
        return octets == 4 ? value : -1;
    }

    private static IpAddress parseV6(String s) {
        int[] groups = new int[8];
        int n = 0;
        int gap = -1; // group index where "::" stands
        int len = s.length();
        int i = 0;
        if (s.startsWith("::")) {
            gap = 0;
            i = 2;
            if (len == 2) {
                return new IpAddress(V6, 0, 0);
            }
        } else if (s.charAt(0) == ':') {
            return null;
        }
        while (i < len) {
            int start = i;
            int value = 0;
            while (i < len && Character.digit(s.charAt(i), 16) >= 0) {
                value = (value << 4) | Character.digit(s.charAt(i), 16);
                i++;
            }
            int digits = i - start;
            if (i < len && s.charAt(i) == '.') {
                // Embedded IPv4 in the last two groups.
                long v4 = parseV4(s, start, len);
                if (v4 < 0 || n > 6) {
                    return null;
                }
                groups[n++] = (int) (v4 >>> 16);
                groups[n++] = (int) (v4 & 0xFFFF);
                i = len;
                break;
            }
            if (digits == 0 || digits > 4 || n == 8) {
                return null;
            }
            groups[n++] = value;
            if (i == len) {
                break;
            }
            if (s.charAt(i) != ':') {
                return null;
            }
            i++;
            if (i < len && s.charAt(i) == ':') {
                if (gap >= 0) {
                    return null;
                }
                gap = n;
                i++;
                if (i == len) {
                    break;
                }
            } else if (i == len) {
                return null; // trailing single colon
            }
        }
        if (gap < 0 ? n != 8 : n > 7) {
            return null;
        }
        int[] full = new int[8];
        if (gap < 0) {
            full = groups;
        } else {
            int tail = n - gap;
            System.arraycopy(groups, 0, full, 0, gap);
            System.arraycopy(groups, gap, full, 8 - tail, tail);
        }
        long hi = 0;
        long lo = 0;
        for (int g = 0; g < 4; g++) {
            hi = (hi << 16) | full[g];
            lo = (lo << 16) | full[g + 4];
        }
        return new IpAddress(V6, hi, lo);
    }

    /** The canonical text: dotted quad, or RFC 5952 IPv6 (lower case, longest zero run as ::). */
    @Override
    public String toString() {
        if (family == V4) {
            return ((lo >>> 24) & 0xFF) + "." + ((lo >>> 16) & 0xFF) + "." + ((lo >>> 8) & 0xFF) + "." + (lo & 0xFF);
        }
        int[] g = new int[8];
        for (int k = 0; k < 4; k++) {
            g[k] = (int) ((hi >>> (48 - 16 * k)) & 0xFFFF);
            g[k + 4] = (int) ((lo >>> (48 - 16 * k)) & 0xFFFF);
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int k = 0; k < 8; ) {
            if (g[k] != 0) {
                k++;
                continue;
            }
            int start = k;
            while (k < 8 && g[k] == 0) {
                k++;
            }
            if (k - start > bestLen) {
                bestStart = start;
                bestLen = k - start;
            }
        }
        StringBuilder b = new StringBuilder(39);
        for (int k = 0; k < 8; k++) {
            if (k == bestStart) {
                b.append("::");
                k += bestLen - 1;
                continue;
            }
            if (b.length() > 0 && b.charAt(b.length() - 1) != ':') {
                b.append(':');
            }
            b.append(Integer.toHexString(g[k]));
        }
        return b.toString();
    }
}
