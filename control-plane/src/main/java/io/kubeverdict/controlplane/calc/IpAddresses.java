package io.kubeverdict.controlplane.calc;

import java.util.Optional;

/**
 * Strict IP literal and CIDR parsing and canonical formatting, without InetAddress (which may
 * resolve names: I/O has no place in the calculation). IPv6 is formatted per RFC 5952.
 */
public final class IpAddresses {
    private IpAddresses() {}

    /** The address bytes (4 or 16), or empty when the text is not an IP literal. */
    public static Optional<byte[]> parse(String text) {
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        byte[] b = text.indexOf(':') >= 0 ? parseV6(text) : parseV4(text);
        return Optional.ofNullable(b);
    }

    /** The canonical text of an IP literal, or empty when it is not one. */
    public static Optional<String> canonical(String text) {
        return parse(text).map(IpAddresses::format);
    }

    private static byte[] parseV4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return null;
        }
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            // Leading zeros are ambiguous (octal in some parsers); Kubernetes rejects them too.
            if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0')) {
                return null;
            }
            int v = 0;
            for (int k = 0; k < p.length(); k++) {
                char c = p.charAt(k);
                if (c < '0' || c > '9') {
                    return null;
                }
                v = v * 10 + (c - '0');
            }
            if (v > 255) {
                return null;
            }
            out[i] = (byte) v;
        }
        return out;
    }

    private static byte[] parseV6(String s) {
        if (s.indexOf('%') >= 0) {
            return null; // zones are not pod addresses
        }
        int dbl = s.indexOf("::");
        if (dbl >= 0 && s.indexOf("::", dbl + 1) >= 0) {
            return null;
        }
        byte[] out = new byte[16];
        String head = dbl >= 0 ? s.substring(0, dbl) : s;
        String tail = dbl >= 0 ? s.substring(dbl + 2) : "";
        int[] headGroups = groups(head, dbl < 0);
        int[] tailGroups = dbl >= 0 ? groups(tail, true) : new int[0];
        if (headGroups == null || tailGroups == null) {
            return null;
        }
        int total = headGroups.length + tailGroups.length;
        if (dbl < 0 ? total != 8 : total > 7) {
            return null;
        }
        for (int i = 0; i < headGroups.length; i++) {
            out[2 * i] = (byte) (headGroups[i] >> 8);
            out[2 * i + 1] = (byte) headGroups[i];
        }
        int off = 8 - tailGroups.length;
        for (int i = 0; i < tailGroups.length; i++) {
            out[2 * (off + i)] = (byte) (tailGroups[i] >> 8);
            out[2 * (off + i) + 1] = (byte) tailGroups[i];
        }
        return out;
    }

    /** 16-bit groups of a colon-separated part; an embedded IPv4 tail counts as two groups. */
    private static int[] groups(String part, boolean mayEndWithV4) {
        if (part.isEmpty()) {
            return new int[0];
        }
        String[] fields = part.split(":", -1);
        int n = fields.length;
        boolean v4 = mayEndWithV4 && fields[n - 1].indexOf('.') >= 0;
        int[] out = new int[v4 ? n + 1 : n];
        for (int i = 0; i < n; i++) {
            String f = fields[i];
            if (v4 && i == n - 1) {
                byte[] b = parseV4(f);
                if (b == null) {
                    return null;
                }
                out[i] = ((b[0] & 0xff) << 8) | (b[1] & 0xff);
                out[i + 1] = ((b[2] & 0xff) << 8) | (b[3] & 0xff);
                continue;
            }
            if (f.isEmpty() || f.length() > 4) {
                return null;
            }
            int v = 0;
            for (int k = 0; k < f.length(); k++) {
                int d = Character.digit(f.charAt(k), 16);
                if (d < 0) {
                    return null;
                }
                v = v * 16 + d;
            }
            out[i] = v;
        }
        return out;
    }

    public static String format(byte[] b) {
        if (b.length == 4) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on ties.
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(40);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }

    /** A parsed CIDR with host bits cleared. */
    public record Cidr(byte[] network, int prefixLength) {
        public boolean contains(Cidr other) {
            if (other.network.length != network.length || other.prefixLength < prefixLength) {
                return false;
            }
            return java.util.Arrays.equals(mask(other.network, prefixLength), network);
        }

        public boolean contains(byte[] address) {
            return address.length == network.length
                    && java.util.Arrays.equals(mask(address, prefixLength), network);
        }

        @Override
        public String toString() {
            return format(network) + "/" + prefixLength;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Cidr c && c.prefixLength == prefixLength
                    && java.util.Arrays.equals(c.network, network);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(network) * 31 + prefixLength;
        }
    }

    /**
     * Parses "address/length". Host bits are cleared, as Kubernetes (Go's ParseCIDR) does, so
     * "10.0.0.1/24" means 10.0.0.0/24.
     */
    public static Optional<Cidr> parseCidr(String text) {
        if (text == null) {
            return Optional.empty();
        }
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1) {
            return Optional.empty();
        }
        byte[] addr = parse(text.substring(0, slash)).orElse(null);
        if (addr == null) {
            return Optional.empty();
        }
        String lenText = text.substring(slash + 1);
        if (lenText.length() > 3 || !lenText.chars().allMatch(Character::isDigit)
                || (lenText.length() > 1 && lenText.charAt(0) == '0')) {
            return Optional.empty();
        }
        int len = Integer.parseInt(lenText);
        if (len > addr.length * 8) {
            return Optional.empty();
        }
        return Optional.of(new Cidr(mask(addr, len), len));
    }

    static byte[] mask(byte[] addr, int len) {
        byte[] out = addr.clone();
        for (int i = 0; i < out.length; i++) {
            int bits = Math.max(0, Math.min(8, len - 8 * i));
            out[i] = (byte) (out[i] & (0xff00 >> bits));
        }
        return out;
    }
}
