// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.policy.IpAddress;
import java.nio.ByteBuffer;

/** IP/UDP and IP/TCP packets from port 53 carrying DNS messages, as the DNS queue copies them. */
final class DnsPackets {
    private DnsPackets() {}

    static byte[] udp(String src, String dst, byte[] message) {
        byte[] l4 = ByteBuffer.allocate(8 + message.length)
                .putShort((short) 53)
                .putShort((short) 40000)
                .putShort((short) (8 + message.length))
                .putShort((short) 0)
                .put(message)
                .array();
        return ip(src, dst, DnsSegment.UDP, l4);
    }

    /** A UDP query from src:40000 to dst:53 (a pod's query to its resolver). */
    static byte[] udpQuery(String src, String dst, byte[] message) {
        return udp(src, 40000, dst, 53, message);
    }

    static byte[] udp(String src, int srcPort, String dst, int dstPort, byte[] message) {
        byte[] l4 = ByteBuffer.allocate(8 + message.length)
                .putShort((short) srcPort)
                .putShort((short) dstPort)
                .putShort((short) (8 + message.length))
                .putShort((short) 0)
                .put(message)
                .array();
        return ip(src, dst, DnsSegment.UDP, l4);
    }

    /** A TCP segment whose payload is the given messages, each with its 2-byte length. */
    static byte[] tcp(String src, String dst, byte[]... messages) {
        int payload = 0;
        for (byte[] m : messages) {
            payload += 2 + m.length;
        }
        ByteBuffer b = ByteBuffer.allocate(20 + payload)
                .putShort((short) 53)
                .putShort((short) 40000)
                .putInt(1)
                .putInt(1)
                .put((byte) 0x50)
                .put((byte) 0x18)
                .putShort((short) 65535)
                .putInt(0);
        for (byte[] m : messages) {
            b.putShort((short) m.length).put(m);
        }
        return ip(src, dst, DnsSegment.TCP, b.array());
    }

    /** A TCP segment with raw payload bytes. */
    static byte[] tcpRaw(String src, String dst, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(20 + payload.length)
                .putShort((short) 53)
                .putShort((short) 40000)
                .putInt(1)
                .putInt(1)
                .put((byte) 0x50)
                .put((byte) 0x18)
                .putShort((short) 65535)
                .putInt(0)
                .put(payload);
        return ip(src, dst, DnsSegment.TCP, b.array());
    }

    static byte[] ip(String src, String dst, int protocol, byte[] l4) {
        IpAddress s = IpAddress.parse(src);
        IpAddress d = IpAddress.parse(dst);
        if (s.family() == IpAddress.V4) {
            return ByteBuffer.allocate(20 + l4.length)
                    .put((byte) 0x45)
                    .put((byte) 0)
                    .putShort((short) (20 + l4.length))
                    .putInt(0)
                    .put((byte) 64)
                    .put((byte) protocol)
                    .putShort((short) 0)
                    .putInt((int) s.lo())
                    .putInt((int) d.lo())
                    .put(l4)
                    .array();
        }
        return ByteBuffer.allocate(40 + l4.length)
                .putInt(0x6000_0000)
                .putShort((short) l4.length)
                .put((byte) protocol)
                .put((byte) 64)
                .putLong(s.hi())
                .putLong(s.lo())
                .putLong(d.hi())
                .putLong(d.lo())
                .put(l4)
                .array();
    }
}
