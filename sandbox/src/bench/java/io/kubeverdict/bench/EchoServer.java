// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import io.kubeverdict.testbed.Testbed;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP echo server for one byte per connection, listening inside a pod's namespace (the listener
 * is opened on a thread in that namespace; accepted sockets belong to it whatever thread serves
 * them). Each connection: read one byte, write it back, wait for the client's close.
 */
final class EchoServer implements AutoCloseable {
    private final ServerSocket listener;
    private final ExecutorService handlers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-echo");
        t.setDaemon(true);
        return t;
    });
    private final Thread acceptor;

    EchoServer(Testbed bed, String namespace, InetAddress address, int port) throws Exception {
        listener = bed.callIn(namespace, () -> {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(address, port), 1024);
            return s;
        });
        acceptor = new Thread(this::acceptLoop, "bench-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket s = listener.accept();
                handlers.execute(() -> serve(s));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void serve(Socket s) {
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            int b = in.read();
            if (b >= 0) {
                s.getOutputStream().write(b);
                while (in.read() >= 0) {
                    // until the client closes
                }
            }
        } catch (IOException ignored) {
            // the client measures failures
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        handlers.shutdownNow();
    }
}
