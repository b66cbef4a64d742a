// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.testing.flow.InNamespace;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What a pod's stub resolver does, for kernel tests: send one query (UDP, or TCP with its length
 * prefix) from inside a namespace and read the A/AAAA addresses of the answer. Decodes the answer
 * on its own (not with the agent's parser), skipping compressed names.
 */
final class DnsStubClient {
    static final int A = DnsResponseParser.TYPE_A;
    static final int AAAA = DnsResponseParser.TYPE_AAAA;

    private DnsStubClient() {}

    /** The addresses of the answer to (name, qtype) from server:53 over UDP, asked from inside in. */
    static List<InetAddress> udp(InNamespace in, String server, String name, int qtype, int timeoutMillis)
            throws Exception {
        return in.call(() -> {
            try (DatagramSocket s = new DatagramSocket()) {
                s.setSoTimeout(timeoutMillis);
                s.connect(new InetSocketAddress(server, 53));
                return ask(s, name, qtype);
            }
        });
    }

    /** Over a UDP socket connected to the server (one flow for many queries). */
    static List<InetAddress> ask(DatagramSocket connected, String name, int qtype) throws IOException {
        int id = (int) (System.nanoTime() & 0xffff);
        byte[] q = query(id, name, qtype);
        connected.send(new DatagramPacket(q, q.length));
        byte[] buf = new byte[4096];
        while (true) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            connected.receive(p);
            ByteBuffer answer = ByteBuffer.wrap(buf, 0, p.getLength()).slice();
            if ((answer.getShort(0) & 0xffff) == id) {
                return addresses(answer);
            }
        }
    }

    /** The same over TCP (a new connection per query, as a resolver retrying after TC). */
    static List<InetAddress> tcp(InNamespace in, String server, String name, int qtype, int timeoutMillis)
            throws Exception {
        return in.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(server, 53), timeoutMillis);
                s.setSoTimeout(timeoutMillis);
                byte[] q = query(1, name, qtype);
                s.getOutputStream()
                        .write(ByteBuffer.allocate(2 + q.length)
                                .putShort((short) q.length)
                                .put(q)
                                .array());
                DataInputStream in2 = new DataInputStream(s.getInputStream());
                byte[] answer = new byte[in2.readUnsignedShort()];
                in2.readFully(answer);
                return addresses(ByteBuffer.wrap(answer));
            }
        });
    }

    static byte[] query(int id, String name, int qtype) {
        ByteBuffer b = ByteBuffer.allocate(12 + name.length() + 2 + 4)
                .putShort((short) id)
                .putShort((short) 0x0100)
                .putShort((short) 1)
                .putShort((short) 0)
                .putShort((short) 0)
                .putShort((short) 0);
        for (String label : name.split("\\.")) {
            byte[] l = label.getBytes(StandardCharsets.US_ASCII);
            b.put((byte) l.length).put(l);
        }
        return b.put((byte) 0).putShort((short) qtype).putShort((short) 1).array();
    }

    /** The A and AAAA addresses among the answer records, in order. */
    static List<InetAddress> addresses(ByteBuffer m) throws IOException {
        int questions = m.getShort(4) & 0xffff;
        int answers = m.getShort(6) & 0xffff;
        int at = 12;
        for (int i = 0; i < questions; i++) {
            at = skipName(m, at) + 4;
        }
        List<InetAddress> out = new ArrayList<>();
        for (int i = 0; i < answers; i++) {
            at = skipName(m, at);
            int type = m.getShort(at) & 0xffff;
            int rdlength = m.getShort(at + 8) & 0xffff;
            at += 10;
            if (type == A || type == AAAA) {
                byte[] address = new byte[rdlength];
                m.get(at, address);
                out.add(InetAddress.getByAddress(address));
            }
            at += rdlength;
        }
        return out;
    }

    private static int skipName(ByteBuffer m, int at) {
        while (true) {
            int len = m.get(at) & 0xff;
            if (len == 0) {
                return at + 1;
            }
            if ((len & 0xC0) == 0xC0) {
                return at + 2;
            }
            at += 1 + len;
        }
    }
}
