package io.kubeverdict.agent.inspect;

import io.kubeverdict.policy.PacketTuple;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Converts between a packet tuple's numeric addresses and their text forms (RFC 5952 for v6). */
public final class Addresses {
    private Addresses() {}

    public static String source(PacketTuple packet) {
        return format(packet.family, packet.srcHi, packet.srcLo);
    }

    public static String destination(PacketTuple packet) {
        return format(packet.family, packet.dstHi, packet.dstLo);
    }

    public static String format(int family, long hi, long lo) {
        if (family == 4) {
            int v = (int) lo;
            return (v >>> 24) + "." + ((v >>> 16) & 0xff) + "." + ((v >>> 8) & 0xff) + "." + (v & 0xff);
        }
        int[] groups = new int[8];
        for (int g = 0; g < 4; g++) {
            groups[g] = (int) (hi >>> (48 - 16 * g)) & 0xffff;
            groups[g + 4] = (int) (lo >>> (48 - 16 * g)) & 0xffff;
        }
        // RFC 5952: the longest run (>= 2) of zero groups, the first one on ties, becomes "::".
        int bestStart = -1;
        int bestLen = 1;
        for (int g = 0; g < 8; ) {
            if (groups[g] != 0) {
                g++;
                continue;
            }
            int start = g;
            while (g < 8 && groups[g] == 0) {
                g++;
            }
            if (g - start > bestLen) {
                bestStart = start;
                bestLen = g - start;
            }
        }
        StringBuilder out = new StringBuilder(39);
        for (int g = 0; g < 8; g++) {
            if (g == bestStart) {
                out.append("::");
                g += bestLen - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(Integer.toHexString(groups[g]));
        }
        return out.toString();
    }

    /** The canonical text form of an address literal (no DNS), or null when it is not one. */
    public static String canonical(String literal) {
        if (literal == null || literal.isEmpty()
                || !(literal.indexOf(':') >= 0 || literal.chars().allMatch(c -> c == '.' || Character.isDigit(c)))) {
            return null;
        }
        try {
            byte[] b = InetAddress.getByName(literal).getAddress();
            if (b.length == 4) {
                return format(4, 0, ((b[0] & 0xffL) << 24) | ((b[1] & 0xffL) << 16) | ((b[2] & 0xffL) << 8) | (b[3] & 0xffL));
            }
            long hi = 0;
            long lo = 0;
            for (int i = 0; i < 8; i++) {
                hi = (hi << 8) | (b[i] & 0xffL);
                lo = (lo << 8) | (b[i + 8] & 0xffL);
            }
            return format(6, hi, lo);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
