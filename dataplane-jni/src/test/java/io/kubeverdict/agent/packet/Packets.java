// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.packet;

import java.io.ByteArrayOutputStream;

/** Crafted IP packets for parser tests (big-endian wire bytes). */
final class Packets {
    private Packets() {}

    static byte[] ipv4(int protocol, int ihlWords, int fragmentOffset, byte[] src, byte[] dst, byte[] l4) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int headerLength = ihlWords * 4;
        out.write(0x40 | ihlWords);
        out.write(0);
        int total = headerLength + l4.length;
        out.write(total >> 8);
        out.write(total);
        out.write(0x12);
        out.write(0x34); // id
        out.write((fragmentOffset >> 8) & 0x1f);
        out.write(fragmentOffset);
        out.write(64);
        out.write(protocol);
        out.write(0);
        out.write(0); // checksum (not checked)
        out.writeBytes(src);
        out.writeBytes(dst);
        for (int i = 20; i < headerLength; i++) {
            out.write(1); // NOP options
        }
        out.writeBytes(l4);
        return out.toByteArray();
    }

    static byte[] ipv6(int nextHeader, byte[] src, byte[] dst, byte[] rest) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {0x60, 0, 0, 0});
        out.write(rest.length >> 8);
        out.write(rest.length);
        out.write(nextHeader);
        out.write(64);
        out.writeBytes(src);
        out.writeBytes(dst);
        out.writeBytes(rest);
        return out.toByteArray();
    }

    /** An IPv6 extension header of (lengthField + 1) * 8 bytes (AH: (lengthField + 2) * 4). */
    static byte[] extension(int next, int lengthField, int size) {
        byte[] h = new byte[size];
        h[0] = (byte) next;
        h[1] = (byte) lengthField;
        return h;
    }

    static byte[] fragment(int next, int offsetUnits, boolean more) {
        int v = (offsetUnits << 3) | (more ? 1 : 0);
        return new byte[] {(byte) next, 0, (byte) (v >> 8), (byte) v, 0, 0, 0, 42};
    }

    /** First bytes of a TCP/UDP/SCTP header: source port, destination port, then filler. */
    static byte[] ports(int src, int dst, int size) {
        byte[] h = new byte[size];
        h[0] = (byte) (src >> 8);
        h[1] = (byte) src;
        h[2] = (byte) (dst >> 8);
        h[3] = (byte) dst;
        return h;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] v4(int a, int b, int c, int d) {
        return new byte[] {(byte) a, (byte) b, (byte) c, (byte) d};
    }

    static byte[] v6(int lastByte) {
        byte[] a = new byte[16];
        a[0] = (byte) 0xfd;
        a[1] = 0x00;
        a[15] = (byte) lastByte;
        return a;
    }
}
