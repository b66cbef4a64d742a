// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.flow;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP echo server on one port of a namespace (all addresses, both families): every accepted
 * connection echoes on its own daemon thread until its peer closes it or the server is closed.
 */
public final class TcpEchoServer implements AutoCloseable {
    private final ServerSocket server;
    private final Set<Socket> accepted = ConcurrentHashMap.newKeySet();

    private TcpEchoServer(ServerSocket server) {
        this.server = server;
        Thread acceptor = new Thread(this::accept, "accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public static TcpEchoServer start(InNamespace in, int port) throws Exception {
        return new TcpEchoServer(in.call(() -> new ServerSocket(port, 1024, InetAddress.getByName("::"))));
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                accepted.add(s);
                Thread echo = new Thread(() -> echo(s), "echo-" + server.getLocalPort());
                echo.setDaemon(true);
                echo.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void echo(Socket s) {
        try (s;
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream()) {
            byte[] buf = new byte[256];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException ignored) {
            // the client went away, or the server closed
        } finally {
            accepted.remove(s);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : accepted) {
            s.close();
        }
    }
}
