// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.proto.v1.Protocol;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tries every ordered pair of pods at once on one port: a TCP connect, or a UDP request that must
 * be echoed (re-sent every 200 ms, a dropped first datagram is not a lost conversation). Each
 * client socket is opened in its source pod's namespace; a policy drop shows as a timeout.
 */
final class Prober {
    private static final long UDP_RESEND_NANOS = Duration.ofMillis(200).toNanos();
    private static final ByteBuffer PAYLOAD =
            ByteBuffer.wrap("kube-verdict probe".getBytes(java.nio.charset.StandardCharsets.US_ASCII));

    private final List<PodSpec> pods;
    private final Map<String, NetnsThread> threads;

    Prober(List<PodSpec> pods, Map<String, NetnsThread> threads) {
        this.pods = pods;
        this.threads = threads;
    }

    ObservedMatrix probe(ServePort target, Duration timeout) throws Exception {
        List<String> names = pods.stream().map(PodSpec::name).sorted().toList();
        Map<String, Map<String, Outcome>> outcomes = new LinkedHashMap<>();
        names.forEach(n -> outcomes.put(n, new LinkedHashMap<>()));
        if (target.protocol() == Protocol.SCTP) {
            names.forEach(from -> names.forEach(to -> outcomes.get(from).put(to, Outcome.UNSUPPORTED)));
            return new ObservedMatrix(target, names, outcomes);
        }
        List<Attempt> attempts = new ArrayList<>();
        try (Selector selector = Selector.open()) {
            for (PodSpec from : pods) {
                List<SelectableChannel> opened = threads.get(from.name()).call(() -> {
                    List<SelectableChannel> list = new ArrayList<>();
                    for (int i = 0; i < pods.size(); i++) {
                        list.add(target.protocol() == Protocol.TCP ? SocketChannel.open() : DatagramChannel.open());
                    }
                    return list;
                });
                for (int i = 0; i < pods.size(); i++) {
                    PodSpec to = pods.get(i);
                    Attempt a = new Attempt(
                            from.name(),
                            to.name(),
                            opened.get(i),
                            new InetSocketAddress(to.addressFrom(from), target.port()));
                    attempts.add(a);
                    a.start(selector);
                }
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            int pending = (int) attempts.stream().filter(a -> a.outcome == null).count();
            while (pending > 0) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    break;
                }
                long waitMillis = Math.max(1, Math.min((deadline - now) / 1_000_000, UDP_RESEND_NANOS / 1_000_000));
                selector.select(waitMillis);
                for (SelectionKey key : selector.selectedKeys()) {
                    ((Attempt) key.attachment()).ready(key);
                }
                selector.selectedKeys().clear();
                now = System.nanoTime();
                for (Attempt a : attempts) {
                    if (a.outcome == null && a.udp() && now - a.lastSent >= UDP_RESEND_NANOS) {
                        a.send(now);
                    }
                }
                pending = (int) attempts.stream().filter(a -> a.outcome == null).count();
            }
        } finally {
            for (Attempt a : attempts) {
                a.channel.close();
            }
        }
        for (Attempt a : attempts) {
            outcomes.get(a.from).put(a.to, a.outcome == null ? Outcome.TIMEOUT : a.outcome);
        }
        return new ObservedMatrix(target, names, outcomes);
    }

    private static final class Attempt {
        final String from;
        final String to;
        final SelectableChannel channel;
        final InetSocketAddress destination;
        Outcome outcome;
        long lastSent;

        Attempt(String from, String to, SelectableChannel channel, InetSocketAddress destination) {
            this.from = from;
            this.to = to;
            this.channel = channel;
            this.destination = destination;
        }

        boolean udp() {
            return channel instanceof DatagramChannel;
        }

        void start(Selector selector) {
            try {
                channel.configureBlocking(false);
                if (channel instanceof SocketChannel tcp) {
                    if (tcp.connect(destination)) {
                        outcome = Outcome.CONNECTED;
                    } else {
                        tcp.register(selector, SelectionKey.OP_CONNECT, this);
                    }
                } else {
                    DatagramChannel udp = (DatagramChannel) channel;
                    udp.connect(destination);
                    udp.register(selector, SelectionKey.OP_READ, this);
                    send(System.nanoTime());
                }
            } catch (IOException e) {
                outcome = Outcome.ERROR;
            }
        }

        void send(long now) {
            lastSent = now;
            try {
                ((DatagramChannel) channel).write(PAYLOAD.duplicate());
            } catch (PortUnreachableException e) {
                outcome = Outcome.REFUSED;
            } catch (IOException e) {
                // a transient send error (no route yet); the next resend or the deadline decides
            }
        }

        void ready(SelectionKey key) {
            try {
                if (channel instanceof SocketChannel tcp) {
                    tcp.finishConnect();
                    outcome = Outcome.CONNECTED;
                } else {
                    int n = ((DatagramChannel) channel).read(ByteBuffer.allocate(1500));
                    if (n > 0) {
                        outcome = Outcome.CONNECTED;
                    }
                }
            } catch (PortUnreachableException | java.net.ConnectException e) {
                outcome = Outcome.REFUSED;
            } catch (IOException e) {
                outcome = Outcome.ERROR;
            }
            if (outcome != null) {
                key.cancel();
            }
        }
    }
}
