// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import io.kubeverdict.jni.Netns;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The client side: threads inside the client pod's namespace that each open connections one after
 * the other — connect, write one byte, read it back, close — and record each one's duration.
 */
final class ConnectionLoad {
    private static final int TIMEOUT_MS = 3000;

    private final String clientNamespace;
    private final InetSocketAddress server;

    ConnectionLoad(String clientNamespace, InetSocketAddress server) {
        this.clientNamespace = clientNamespace;
        this.server = server;
    }

    /** Runs threads × perThread connections; returns the wall time and every connection's latency. */
    Sample run(int threads, int perThread) throws Exception {
        long[][] latencies = new long[threads][perThread];
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
                            for (int i = 0; i < perThread; i++) {
                                mine[i] = oneConnection();
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            start.reset();
                        }
                    },
                    "bench-client-" + t);
            workers.add(w);
            w.start();
        }
        start.await();
        long t0 = System.nanoTime();
        for (Thread w : workers) {
            w.join();
        }
        long wall = System.nanoTime() - t0;
        if (failure.get() != null) {
            throw new IOException("connection to " + server + " failed: " + failure.get(), failure.get());
        }
        long[] all = new long[threads * perThread];
        for (int t = 0; t < threads; t++) {
            System.arraycopy(latencies[t], 0, all, t * perThread, perThread);
        }
        return Sample.of(wall, all);
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
