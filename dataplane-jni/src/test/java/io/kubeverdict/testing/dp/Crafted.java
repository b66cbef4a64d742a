// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/** Well-formed packets with valid checksums (conntrack checks them), built byte by byte. */
public final class Crafted {
    private Crafted() {}

    /** An SCTP INIT (verification tag 0, one INIT chunk), CRC32c set. */
    public static byte[] sctpInit(int srcPort, int dstPort) {
        ByteBuffer b = ByteBuffer.allocate(32);
        b.putShort((short) srcPort).putShort((short) dstPort).putInt(0).putInt(0);
        b.put((byte) 1).put((byte) 0).putShort((short) 20); // INIT chunk header
        b.putInt(0x1234abcd)
                .putInt(65536)
                .putShort((short) 10)
                .putShort((short) 10)
                .putInt(1);
        byte[] sctp = b.array();
        CRC32C crc = new CRC32C();
        crc.update(sctp);
        ByteBuffer.wrap(sctp, 8, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
        return sctp;
    }

    /** A TCP SYN with its checksum over the given pseudo-header sum. */
    public static byte[] tcpSyn(int srcPort, int dstPort, long pseudoSum) {
        ByteBuffer b = ByteBuffer.allocate(20);
        b.putShort((short) srcPort).putShort((short) dstPort).putInt(0x01020304).putInt(0);
        b.put((byte) 0x50)
                .put((byte) 0x02)
                .putShort((short) 64240)
                .putShort((short) 0)
                .putShort((short) 0);
        byte[] tcp = b.array();
        int sum = fold(pseudoSum + sum(tcp));
        tcp[16] = (byte) (~sum >> 8);
        tcp[17] = (byte) ~sum;
        return tcp;
    }

    public static byte[] ipv4(int protocol, String src, String dst, byte[] payload) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(20 + payload.length);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (20 + payload.length)).putInt(0);
        b.put((byte) 64).put((byte) protocol).putShort((short) 0);
        b.put(InetAddress.getByName(src).getAddress())
                .put(InetAddress.getByName(dst).getAddress());
        b.put(payload); // the kernel fills in the header checksum for raw sends
        return b.array();
    }

    /** IPv6 with optional extension-header bytes between the fixed header and the payload. */
    public static byte[] ipv6(int firstNext, String src, String dst, byte[] extensions, byte[] payload)
            throws Exception {
        ByteBuffer b = ByteBuffer.allocate(40 + extensions.length + payload.length);
        b.putInt(0x60000000)
                .putShort((short) (extensions.length + payload.length))
                .put((byte) firstNext)
                .put((byte) 64);
        b.put(InetAddress.getByName(src).getAddress())
                .put(InetAddress.getByName(dst).getAddress());
        b.put(extensions).put(payload);
        return b.array();
    }

    /** A hop-by-hop header of 8*(units+1) bytes holding one unknown skip-me option (type 0x1e). */
    public static byte[] hopByHop(int next, int units) {
        int size = 8 * (units + 1);
        byte[] h = new byte[size];
        h[0] = (byte) next;
        h[1] = (byte) units;
        h[2] = 0x1e; // option type: action bits 00 = skip when unknown
        h[3] = (byte) (size - 4);
        return h;
    }

    /**
     * A destination-options header of {@code size} bytes (a multiple of 8, at least 8) filled with
     * unknown skip-me options (type 0x1e, at most 255 data bytes each), which Linux passes over: it
     * only moves the transport header further back.
     */
    public static byte[] destinationOptions(int next, int size) {
        if (size < 8 || size % 8 != 0 || size > 2048) {
            throw new IllegalArgumentException("size " + size);
        }
        byte[] h = new byte[size];
        h[0] = (byte) next;
        h[1] = (byte) (size / 8 - 1);
        int at = 2;
        while (size - at >= 2) {
            int data = Math.min(255, size - at - 2);
            if (size - at - 2 - data == 1) {
                data--; // leave two bytes for one more option, not a lone one
            }
            h[at] = 0x1e;
            h[at + 1] = (byte) data;
            at += 2 + data;
        }
        return h; // a last single byte stays 0: Pad1
    }

    public static long pseudoSumV4(String src, String dst, int protocol, int length) throws Exception {
        return sum(InetAddress.getByName(src).getAddress())
                + sum(InetAddress.getByName(dst).getAddress())
                + protocol
                + length;
    }

    public static long pseudoSumV6(String src, String dst, int protocol, int length) throws Exception {
        return sum(InetAddress.getByName(src).getAddress())
                + sum(InetAddress.getByName(dst).getAddress())
                + protocol
                + length;
    }

    private static long sum(byte[] data) {
        long s = 0;
        for (int i = 0; i < data.length; i += 2) {
            s += ((data[i] & 0xff) << 8) | (i + 1 < data.length ? data[i + 1] & 0xff : 0);
        }
        return s;
    }

    private static int fold(long s) {
        while ((s >> 16) != 0) {
            s = (s & 0xffff) + (s >> 16);
        }
        return (int) s;
    }
}
