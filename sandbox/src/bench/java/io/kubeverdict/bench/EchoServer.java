// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import io.kubeverdict.testbed.Testbed;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP echo server for one byte per connection, listening inside a pod's namespace (the listener
 * is opened on a thread in that namespace; accepted sockets belong to it whatever thread serves
 * them). Each connection: read one byte, write it back, wait for the client's close. Counts the
 * CPU time its threads spend (accepting and serving), and the connections being served.
 */
final class EchoServer implements AutoCloseable {
    private final ServerSocket listener;
    private final ExecutorService handlers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-echo");
        t.setDaemon(true);
        return t;
    });
    private final Thread acceptor;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private final LongAdder cpuNanos = new LongAdder();
    private final AtomicInteger serving = new AtomicInteger();

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
                long cpu0 = THREADS.getCurrentThreadCpuTime(); // what accept did before it returned is not counted
                serving.incrementAndGet();
                handlers.execute(() -> serve(s));
                cpuNanos.add(THREADS.getCurrentThreadCpuTime() - cpu0);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        long cpu0 = THREADS.getCurrentThreadCpuTime();
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
        } finally {
            cpuNanos.add(THREADS.getCurrentThreadCpuTime() - cpu0);
            serving.decrementAndGet();
        }
    }

    /** CPU time of the acceptor and handler threads so far (handlers count theirs when a connection ends). */
    long cpuNanos() {
        return cpuNanos.sum();
    }

    /** Waits (at most {@code bound}) until no connection is being served. */
    void awaitIdle(java.time.Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (serving.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        handlers.shutdownNow();
    }
}
