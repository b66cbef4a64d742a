// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.Callable;

/**
 * {@code kubectl port-forward} for the sandbox's console: listens on an address of this machine
 * and joins each connection to one opened inside the fabric namespace to the control plane's
 * loopback console, so the console sees a loopback peer exactly as behind port-forward. Bytes
 * only; each direction on a thread of its own, both closed when either side ends.
 */
final class ConsoleForward implements AutoCloseable {
    private final ServerSocket listener;
    private final Callable<Socket> upstream;

    private ConsoleForward(ServerSocket listener, Callable<Socket> upstream) {
        this.listener = listener;
        this.upstream = upstream;
    }

    /** @param upstream opens a connection to the console (in its namespace) */
    static ConsoleForward start(InetSocketAddress listen, Callable<Socket> upstream) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(listen);
        ConsoleForward f = new ConsoleForward(s, upstream);
        Thread t = new Thread(f::acceptLoop, "console-forward");
        t.setDaemon(true);
        t.start();
        return f;
    }

    int port() {
        return listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket browser;
            try {
                browser = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket console;
            try {
                console = upstream.call();
            } catch (Exception e) {
                closeQuietly(browser);
                continue;
            }
            pump(browser, console, "console-forward-in");
            pump(console, browser, "console-forward-out");
        }
    }

    private static void pump(Socket from, Socket to, String name) {
        Thread t = new Thread(
                () -> {
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        in.transferTo(out);
                    } catch (IOException e) {
                        // either side went away: close both below
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing left to do
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
