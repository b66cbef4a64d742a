// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.Testbed;
import io.kubeverdict.testbed.TestbedLayout;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * New TCP connections at a steady rate between every ordered pair of pods in turn (each from a
 * socket made in its source pod's namespace), each judged against the
 * {@link ExpectationTimeline} epochs it overlapped, like {@link ContinuousProber} judges a
 * round: a connection that opens where no overlapped epoch allows it is wrong at once; one that
 * does not open within the timeout where only "allowed" is accepted is tried once more with a
 * longer timeout and is wrong if that does not open either. One selector thread drives them all.
 */
final class ConnectionLoad {
    private static final int SOCKETS_PER_BATCH = 32;
    private static final int MAX_IN_FLIGHT = 2048;
    private static final int WRONG_KEPT = 50;

    record Result(
            long connections,
            long connected,
            long denied,
            long retried,
            long errors,
            long strict,
            long wrongCount,
            List<String> wrong,
            double seconds) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%d connections in %.1fs (%.0f/s): %d connected, %d denied, %d re-tried after a "
                            + "timeout, %d socket errors, %d judged in a steady epoch; %d wrong verdicts",
                    connections,
                    seconds,
                    connections / seconds,
                    connected,
                    denied,
                    retried,
                    errors,
                    strict,
                    wrongCount);
        }
    }

    private final class Attempt {
        final int pair;
        final SocketChannel channel;
        final int firstEpoch;
        final long deadline;
        final boolean retry;
        boolean done;

        Attempt(int pair, SocketChannel channel, int firstEpoch, long deadline, boolean retry) {
            this.pair = pair;
            this.channel = channel;
            this.firstEpoch = firstEpoch;
            this.deadline = deadline;
            this.retry = retry;
        }
    }

    private final Testbed testbed;
    private final ExpectationTimeline timeline;
    private final Duration timeout;
    private final Duration retryTimeout;
    private final List<String[]> pairs = new ArrayList<>();
    private final List<InetSocketAddress> destinations = new ArrayList<>();
    private final Map<String, Deque<SocketChannel>> spareSockets = new HashMap<>();
    private final Map<String, String> namespaces = new HashMap<>();
    private final Deque<Attempt> firstTries = new ArrayDeque<>();
    private final Deque<Attempt> retries = new ArrayDeque<>();
    private final List<String> wrong = new ArrayList<>();
    private final long origin = System.nanoTime();
    private long connected;
    private long denied;
    private long retried;
    private long errors;
    private long strict;
    private long wrongCount;
    private int inFlight;

    ConnectionLoad(Testbed testbed, ExpectationTimeline timeline, int port, Duration timeout, Duration retryTimeout) {
        this.testbed = testbed;
        this.timeline = timeline;
        this.timeout = timeout;
        this.retryTimeout = retryTimeout;
        TestbedLayout layout = testbed.layout();
        List<PodSpec> pods = layout.pods().stream()
                .sorted(Comparator.comparing(PodSpec::name))
                .toList();
        for (PodSpec from : pods) {
            namespaces.put(from.name(), layout.podNamespace(from.name()));
            spareSockets.put(from.name(), new ArrayDeque<>());
            for (PodSpec to : pods) {
                if (!from.equals(to)) {
                    pairs.add(new String[] {from.name(), to.name()});
                    destinations.add(new InetSocketAddress(to.addressFrom(from), port));
                }
            }
        }
    }

    /** Opens total connections spread evenly over duration (pairs in turn) and returns once every one is judged. */
    Result run(long total, Duration duration) throws Exception {
        long start = System.nanoTime();
        double interval = (double) duration.toNanos() / total;
        long started = 0;
        try (Selector selector = Selector.open()) {
            while (started < total || inFlight > 0) {
                long now = System.nanoTime();
                while (started < total && now - start >= (long) (started * interval) && inFlight < MAX_IN_FLIGHT) {
                    begin(selector, (int) (started % pairs.size()), timeline.current(), timeout, false);
                    started++;
                }
                long nextStart = started < total ? start + (long) (started * interval) - now : Long.MAX_VALUE;
                selector.select(Math.max(1, Math.min(10, nextStart / 1_000_000)));
                for (SelectionKey key : selector.selectedKeys()) {
                    Attempt a = (Attempt) key.attachment();
                    boolean opened;
                    try {
                        opened = a.channel.finishConnect();
                    } catch (IOException e) { // refused, unreachable: it did not open
                        opened = false;
                        errors++;
                    }
                    if (opened || !a.channel.isConnectionPending()) {
                        key.cancel();
                        finish(selector, a, opened);
                    }
                }
                selector.selectedKeys().clear();
                expire(selector, firstTries);
                expire(selector, retries);
            }
        } finally {
            spareSockets.values().forEach(d -> d.forEach(ConnectionLoad::closeQuietly));
        }
        return new Result(
                total,
                connected,
                denied,
                retried,
                errors,
                strict,
                wrongCount,
                List.copyOf(wrong),
                FaultBed.seconds(start));
    }

    private void begin(Selector selector, int pair, int firstEpoch, Duration within, boolean retry) throws Exception {
        SocketChannel channel = socketOf(pairs.get(pair)[0]);
        Attempt a = new Attempt(pair, channel, firstEpoch, System.nanoTime() + within.toNanos(), retry);
        inFlight++;
        (retry ? retries : firstTries).add(a);
        try {
            channel.configureBlocking(false);
            if (channel.connect(destinations.get(pair))) {
                finish(selector, a, true);
            } else {
                channel.register(selector, SelectionKey.OP_CONNECT, a);
            }
        } catch (IOException e) {
            errors++;
            finish(selector, a, false);
        }
    }

    /** A socket of the source pod's namespace (made there in batches: a socket stays in the namespace it was made in). */
    private SocketChannel socketOf(String pod) throws Exception {
        Deque<SocketChannel> spare = spareSockets.get(pod);
        if (spare.isEmpty()) {
            spare.addAll(testbed.callIn(namespaces.get(pod), () -> {
                List<SocketChannel> batch = new ArrayList<>();
                for (int i = 0; i < SOCKETS_PER_BATCH; i++) {
                    batch.add(SocketChannel.open());
                }
                return batch;
            }));
        }
        return spare.poll();
    }

    private void expire(Selector selector, Deque<Attempt> queue) throws Exception {
        long now = System.nanoTime();
        while (!queue.isEmpty() && (queue.peek().done || queue.peek().deadline <= now)) {
            Attempt a = queue.poll();
            if (!a.done) {
                finish(selector, a, false);
            }
        }
    }

    private void finish(Selector selector, Attempt a, boolean opened) throws Exception {
        if (a.done) {
            return;
        }
        a.done = true;
        inFlight--;
        closeQuietly(a.channel);
        String[] pair = pairs.get(a.pair);
        int last = timeline.current();
        Set<Boolean> accepted = timeline.accepted(a.firstEpoch, last, pair[0], pair[1]);
        if (accepted.contains(opened)) {
            if (opened) {
                connected++;
            } else {
                denied++;
            }
            if (a.firstEpoch == last && timeline.epoch(last).accepted().size() == 1) {
                strict++;
            }
        } else if (!opened && !a.retry) {
            retried++;
            begin(selector, a.pair, a.firstEpoch, retryTimeout, true);
        } else {
            wrongCount++;
            if (wrong.size() < WRONG_KEPT) {
                wrong.add(String.format(
                        Locale.ROOT,
                        "at %.1fs %s %s, accepted: %s",
                        (System.nanoTime() - origin) / 1e9,
                        Verdicts.pair(pair[0], pair[1]),
                        opened ? "CONNECTED" : "did not connect (twice)",
                        timeline.labels(a.firstEpoch, last)));
            }
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing to do: the probe is judged already
        }
    }
}
