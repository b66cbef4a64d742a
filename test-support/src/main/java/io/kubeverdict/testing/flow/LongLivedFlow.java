// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.flow;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One long-lived connection from a namespace to an echo server: every {@value #PERIOD_MILLIS} ms (or
 * the period given)
 * it sends a numbered message and expects it back (TCP: continuous echo on one connection; UDP:
 * periodic datagrams on one connected socket, one source port). Counts what came back, what was
 * lost (UDP only: a number that never returned within {@value #READ_TIMEOUT_MILLIS} ms; TCP
 * retransmits, so a dropped TCP segment is only late, and lateness says nothing on a busy machine)
 * and how the connection ended. For tests: {@link #awaitStopped} tells a connection that was cut
 * from one that goes on.
 */
public final class LongLivedFlow implements AutoCloseable {
    public static final int PERIOD_MILLIS = 20;
    private static final int READ_TIMEOUT_MILLIS = 2000;

    public enum Kind {
        TCP,
        UDP
    }

    private final Kind kind;
    private final String name;
    private final long periodNanos;
    private final AtomicLong echoed = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private volatile long lastEchoNanos = System.nanoTime();
    private volatile String failure;
    private volatile boolean running = true;
    private final Socket tcp;
    private final DatagramSocket udp;
    private final Thread thread;
    private final int localPort;

    private LongLivedFlow(Kind kind, String name, Socket tcp, DatagramSocket udp, int periodMillis) {
        this.kind = kind;
        this.name = name;
        this.periodNanos = periodMillis * 1_000_000L;
        this.tcp = tcp;
        this.udp = udp;
        this.localPort = tcp != null ? tcp.getLocalPort() : udp.getLocalPort();
        this.thread = new Thread(kind == Kind.TCP ? this::runTcp : this::runUdp, "flow-" + name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Opens the connection from a namespace (its socket lives there) and starts it. */
    public static LongLivedFlow open(Kind kind, InNamespace from, String host, int port) throws Exception {
        return open(kind, from, host, port, PERIOD_MILLIS);
    }

    /** As {@link #open(Kind, InNamespace, String, int)}, one message per periodMillis. */
    public static LongLivedFlow open(Kind kind, InNamespace from, String host, int port, int periodMillis)
            throws Exception {
        String name = kind.name().toLowerCase() + "-" + host + ":" + port;
        return from.call(() -> {
            if (kind == Kind.TCP) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(host, port), 3000);
                s.setSoTimeout(READ_TIMEOUT_MILLIS);
                s.setTcpNoDelay(true);
                return new LongLivedFlow(kind, name, s, null, periodMillis);
            }
            DatagramSocket s = new DatagramSocket();
            s.connect(new InetSocketAddress(host, port));
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            return new LongLivedFlow(kind, name, null, s, periodMillis);
        });
    }

    private void runTcp() {
        try (DataOutputStream out = new DataOutputStream(tcp.getOutputStream());
                DataInputStream in = new DataInputStream(tcp.getInputStream())) {
            long next = 0;
            long expected = 0;
            while (running) {
                out.writeLong(next++);
                out.flush();
                // read what has come back; a timeout is a late echo (read on the next round), not a loss
                long deadline = System.nanoTime() + periodNanos;
                while (expected < next && System.nanoTime() < deadline) {
                    try {
                        long got = in.readLong();
                        if (got != expected) {
                            failure = "echo out of order: " + got + " for " + expected;
                            return;
                        }
                        expected++;
                        echoed.incrementAndGet();
                        lastEchoNanos = System.nanoTime();
                    } catch (SocketTimeoutException e) {
                        break;
                    }
                }
                sleepRest(deadline);
            }
        } catch (IOException e) {
            if (running) {
                failure = e.toString();
            }
        }
    }

    private void runUdp() {
        byte[] buf = new byte[8];
        long next = 0;
        while (running) {
            long deadline = System.nanoTime() + periodNanos;
            try {
                long sent = next++;
                udp.send(new DatagramPacket(ByteBuffer.allocate(8).putLong(sent).array(), 8));
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                udp.receive(p);
                if (ByteBuffer.wrap(buf).getLong() != sent) {
                    lost.incrementAndGet(); // a late echo of an earlier number
                } else {
                    echoed.incrementAndGet();
                    lastEchoNanos = System.nanoTime();
                }
            } catch (SocketTimeoutException e) {
                lost.incrementAndGet();
            } catch (IOException e) {
                if (running) {
                    failure = e.toString(); // e.g. ICMP port unreachable on a connected socket
                }
                return;
            }
            sleepRest(deadline);
        }
    }

    private static void sleepRest(long deadline) {
        long left = deadline - System.nanoTime();
        if (left > 0) {
            try {
                Thread.sleep(left / 1_000_000L, (int) (left % 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public long echoed() {
        return echoed.get();
    }

    /** UDP: numbers that never came back (always 0 for TCP). */
    public long lost() {
        return lost.get();
    }

    /** Why the connection ended (reset, refused, ...), or null while it goes on. */
    public String failure() {
        return failure;
    }

    public int localPort() {
        return localPort;
    }

    /** System.nanoTime() of the last echo (of the start before any). */
    public long lastEchoNanos() {
        return lastEchoNanos;
    }

    public long millisSinceLastEcho() {
        return (System.nanoTime() - lastEchoNanos) / 1_000_000L;
    }

    /** Waits until nothing has come back for quietMillis (the connection was cut); false after timeoutMillis. */
    public boolean awaitStopped(long quietMillis, long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (millisSinceLastEcho() < quietMillis && failure == null) {
            if (System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Waits until at least n more echoes than now came back; false after timeoutMillis. */
    public boolean awaitEchoes(long n, long timeoutMillis) throws InterruptedException {
        long target = echoed.get() + n;
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (echoed.get() < target) {
            if (failure != null || System.currentTimeMillis() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    @Override
    public String toString() {
        return name + " (local port " + localPort + "): " + echoed + " echoed, " + lost + " lost, last echo "
                + millisSinceLastEcho() + " ms ago" + (failure == null ? "" : ", ended: " + failure);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        try {
            if (tcp != null) {
                tcp.close();
            } else {
                udp.close();
            }
        } catch (IOException ignored) {
            // closing anyway
        }
        thread.join(2000);
    }
}
