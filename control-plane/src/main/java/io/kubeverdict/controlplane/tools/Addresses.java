package io.kubeverdict.controlplane.tools;

import io.kubeverdict.controlplane.calc.IpAddresses;
import io.kubeverdict.policy.PacketTuple;

/** Fills the verdict function's flyweight tuple from address text. */
final class Addresses {
    private Addresses() {}

    static boolean isV6(String ip) {
        return ip.indexOf(':') >= 0;
    }

    static void fill(PacketTuple t, String src, String dst, int protocol, int dstPort) {
        byte[] s = IpAddresses.parse(src).orElseThrow();
        byte[] d = IpAddresses.parse(dst).orElseThrow();
        t.family = s.length == 4 ? 4 : 6;
        t.srcHi = s.length == 4 ? 0 : bits(s, 0);
        t.srcLo = s.length == 4 ? bits(s, 0) : bits(s, 8);
        t.dstHi = d.length == 4 ? 0 : bits(d, 0);
        t.dstLo = d.length == 4 ? bits(d, 0) : bits(d, 8);
        t.protocol = protocol;
        t.dstPort = dstPort;
    }

    /** Big-endian bytes [from, from+8) (or the 4 of an IPv4 address) as an unsigned long. */
    private static long bits(byte[] b, int from) {
        int n = Math.min(8, b.length - from);
        long v = 0;
        for (int i = 0; i < n; i++) {
            v = (v << 8) | (b[from + i] & 0xffL);
        }
        return v;
    }
}
