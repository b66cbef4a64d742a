// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.testing.flow.InNamespace;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A DNS server for kernel tests and benchmarks: UDP and TCP port 53 of one namespace (all
 * addresses, both families), answering every query with the message {@link Answers} builds for
 * its name and type (built by {@link DnsMessages}: the question echoed, names compressed), with
 * the query's id. A TCP answer is written with its length in one write, as servers do, so it
 * leaves in one segment. Serves on daemon threads until closed.
 */
final class DnsStubServer implements AutoCloseable {
    /** What the server answers for a question. */
    interface Answers {
        DnsMessages answer(String name, int qtype);
    }

    private final Answers answers;
    private final DatagramSocket udp;
    private final ServerSocket tcp;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final AtomicLong served = new AtomicLong();

    private DnsStubServer(Answers answers, DatagramSocket udp, ServerSocket tcp) {
        this.answers = answers;
        this.udp = udp;
        this.tcp = tcp;
        daemon(this::serveUdp, "dns-stub-udp");
        daemon(this::acceptTcp, "dns-stub-tcp");
    }

    static DnsStubServer start(InNamespace in, Answers answers) throws Exception {
        return start(in, "::", 53, answers);
    }

    /**
     * UDP port 53 of one address of the namespace (answers then come from it), next to a server
     * on all addresses (both UDP sockets reuse the address; the more specific one gets its
     * queries). Its TCP side listens on a port of the kernel's choice: not for clients.
     */
    static DnsStubServer startUdp(InNamespace in, String address, Answers answers) throws Exception {
        return start(in, address, 0, answers);
    }

    private static DnsStubServer start(InNamespace in, String address, int tcpPort, Answers answers) throws Exception {
        InetAddress bound = InetAddress.getByName(address);
        DatagramSocket udp = in.call(() -> {
            DatagramSocket u = new DatagramSocket(null);
            u.setReuseAddress(true);
            u.bind(new InetSocketAddress(bound, 53));
            return u;
        });
        try {
            ServerSocket tcp = in.call(() -> new ServerSocket(tcpPort, 64, bound));
            return new DnsStubServer(answers, udp, tcp);
        } catch (Exception e) {
            udp.close();
            throw e;
        }
    }

    /** Queries answered so far. */
    long served() {
        return served.get();
    }

    private static void daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private void serveUdp() {
        byte[] buf = new byte[512];
        while (!udp.isClosed()) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                udp.receive(p);
                byte[] answer =
                        answer(ByteBuffer.wrap(p.getData(), 0, p.getLength()).slice());
                udp.send(new DatagramPacket(answer, answer.length, p.getSocketAddress()));
            } catch (IOException | RuntimeException e) {
                if (udp.isClosed()) {
                    return;
                }
            }
        }
    }

    private void acceptTcp() {
        while (!tcp.isClosed()) {
            try {
                Socket s = tcp.accept();
                connections.add(s);
                daemon(() -> serveTcp(s), "dns-stub-tcp-conn");
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serveTcp(Socket s) {
        try (s;
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream()) {
            while (true) {
                byte[] query = new byte[in.readUnsignedShort()];
                in.readFully(query);
                byte[] answer = answer(ByteBuffer.wrap(query));
                out.write(ByteBuffer.allocate(2 + answer.length)
                        .putShort((short) answer.length)
                        .put(answer)
                        .array());
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the client closed the connection, or the server closed
        } finally {
            connections.remove(s);
        }
    }

    /** The answer to a query (one question; its name has no compression pointers). */
    private byte[] answer(ByteBuffer query) {
        int at = 12;
        StringBuilder name = new StringBuilder();
        for (int len = query.get(at) & 0xff; len != 0; len = query.get(at) & 0xff) {
            if (name.length() > 0) {
                name.append('.');
            }
            name.append(new String(query.array(), query.arrayOffset() + at + 1, len, StandardCharsets.US_ASCII));
            at += 1 + len;
        }
        int qtype = query.getShort(at + 1) & 0xffff;
        byte[] answer = answers.answer(name.toString(), qtype).bytes();
        answer[0] = query.get(0);
        answer[1] = query.get(1);
        served.incrementAndGet();
        return answer;
    }

    @Override
    public void close() throws IOException {
        udp.close();
        tcp.close();
        for (Socket s : connections) {
            s.close();
        }
    }
}
