// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import io.kubeverdict.jni.Netns;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The client side: threads inside the client pod's namespace that each open connections one after
 * the other — connect, write one byte, read it back, close — and record each one's duration.
 */
final class ConnectionLoad {
    private static final int TIMEOUT_MS = 3000;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String clientNamespace;
    private final InetSocketAddress server;
    private final EchoServer echo;

    ConnectionLoad(String clientNamespace, InetSocketAddress server, EchoServer echo) {
        this.clientNamespace = clientNamespace;
        this.server = server;
        this.echo = echo;
    }

    /**
     * Runs threads × perThread connections; returns the wall time, every connection's latency and
     * the CPU time the client threads and the echo server spent on them.
     */
    Sample run(int threads, int perThread) throws Exception {
        long[][] latencies = new long[threads][perThread];
        LongAdder clientCpu = new LongAdder();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads + 1);
        for (int t = 0; t < threads; t++) {
            long[] mine = latencies[t];
            Thread w = new Thread(
                    () -> {
                        try {
                            Netns.enterCurrentThread(Netns.named(clientNamespace));
                            start.await();
                            long cpu0 = THREADS.getCurrentThreadCpuTime();
                            for (int i = 0; i < perThread; i++) {
                                mine[i] = oneConnection();
                            }
                            clientCpu.add(THREADS.getCurrentThreadCpuTime() - cpu0);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            start.reset();
                        }
                    },
                    "bench-client-" + t);
            workers.add(w);
            w.start();
        }
        long serverCpu0 = echo.cpuNanos();
        start.await();
        long t0 = System.nanoTime();
        for (Thread w : workers) {
            w.join();
        }
        long wall = System.nanoTime() - t0;
        // the server's handler has finished when the client's read returned and its close was sent,
        // except for reading the FIN: wait for the last one (bounded) so its CPU time is counted
        echo.awaitIdle(java.time.Duration.ofSeconds(2));
        long serverCpu = echo.cpuNanos() - serverCpu0;
        if (failure.get() != null) {
            throw new IOException("connection to " + server + " failed: " + failure.get(), failure.get());
        }
        long[] all = new long[threads * perThread];
        for (int t = 0; t < threads; t++) {
            System.arraycopy(latencies[t], 0, all, t * perThread, perThread);
        }
        return Sample.of(wall, all, clientCpu.sum() + serverCpu);
    }

    private long oneConnection() throws IOException {
        long t0 = System.nanoTime();
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(server, TIMEOUT_MS);
            s.setSoTimeout(TIMEOUT_MS);
            s.getOutputStream().write(42);
            InputStream in = s.getInputStream();
            if (in.read() != 42) {
                throw new IOException("no echo");
            }
        }
        return System.nanoTime() - t0;
    }
}
