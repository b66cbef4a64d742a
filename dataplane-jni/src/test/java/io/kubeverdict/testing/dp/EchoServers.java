// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.dp;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.testing.TestNamespace;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * TCP and UDP echo servers on wildcard (dual-stack) sockets opened inside a namespace: a socket
 * belongs to the namespace of the thread that created it, so only creation runs there.
 */
public final class EchoServers implements AutoCloseable {
    private final List<AutoCloseable> sockets = new ArrayList<>();

    private EchoServers() {}

    static EchoServers start(TestNamespace ns, int... ports) throws Exception {
        EchoServers servers = new EchoServers();
        try {
            for (int port : ports) {
                ServerSocket tcp = Netns.call(ns.path(), () -> {
                    ServerSocket s = new ServerSocket();
                    s.setReuseAddress(true);
                    s.bind(new InetSocketAddress(port), 128);
                    return s;
                });
                servers.sockets.add(tcp);
                daemon("tcp-echo-" + port, () -> acceptLoop(tcp));
                DatagramSocket udp = Netns.call(ns.path(), () -> new DatagramSocket(port));
                servers.sockets.add(udp);
                daemon("udp-echo-" + port, () -> udpLoop(udp));
            }
            return servers;
        } catch (Exception e) {
            servers.close();
            throw e;
        }
    }

    private static void acceptLoop(ServerSocket server) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                daemon("tcp-echo-conn", () -> echo(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void echo(Socket s) {
        try (s;
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream()) {
            byte[] buf = new byte[1024];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // peer went away
        }
    }

    private static void udpLoop(DatagramSocket socket) {
        byte[] buf = new byte[1500];
        while (!socket.isClosed()) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                socket.receive(p);
                socket.send(new DatagramPacket(p.getData(), p.getLength(), p.getSocketAddress()));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        for (AutoCloseable s : sockets) {
            try {
                s.close();
            } catch (Exception e) {
                // best effort
            }
        }
    }
}
