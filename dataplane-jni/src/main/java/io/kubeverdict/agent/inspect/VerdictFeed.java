// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WatchVerdictsRequest;
import io.kubeverdict.runtime.FatalThreads;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live verdict stream behind WatchVerdicts. The verdict loop calls {@link #publish} for every
 * packet; unless someone watches, that is one volatile read. While watched, the verdict is copied
 * into a {@link VerdictRing} (dropped when full) and a publisher thread explains it with the
 * current index and sends it to each watcher whose filter matches and whose stream is ready;
 * slow watchers lose verdicts instead of slowing anyone down. Cuts of established connections
 * ({@link #publishCut}, from the conntrack thread, explained there) take a small queue of their own
 * to the same publisher thread, so one thread alone writes to the watchers' streams.
 */
public final class VerdictFeed implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(VerdictFeed.class);

    private static final int CUT_QUEUE = 1024;

    /**
     * WatchVerdicts streams open at once (the CLI's {@code watch}, an operator's grpcurl): each
     * costs an explanation per matching verdict on the publisher thread, and anyone with a socket
     * on the node's loopback (a hostNetwork pod) may open them.
     */
    public static final int MAX_WATCH_STREAMS = 8;

    private final int capacity;
    private final Producer first;
    private final List<VerdictRing> rings = new CopyOnWriteArrayList<>();
    private final BlockingQueue<Cut> cuts = new ArrayBlockingQueue<>(CUT_QUEUE);
    private final Supplier<StateHolder.Generation> state;
    private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
    private final AtomicLong undelivered = new AtomicLong();
    private final AtomicInteger watchStreams = new AtomicInteger();
    private final AtomicLong watchStreamsRefused = new AtomicLong();
    private final Thread publisher;
    private volatile boolean watched;
    private volatile boolean running = true;

    public VerdictFeed(int capacity, Supplier<StateHolder.Generation> state) {
        this.capacity = capacity;
        this.state = state;
        this.first = producer();
        this.publisher = FatalThreads.worker("kv-verdict-feed", this::run);
        this.publisher.setDaemon(true);
        this.publisher.start();
    }

    /** Hot path of the first producer (one verdict loop thread only): no allocation, no lock. */
    public void publish(PacketTuple packet, int decisionCode) {
        first.publish(packet, decisionCode);
    }

    /** As {@link #publish(PacketTuple, int)}; {@code keyCached}: the kernel's verdict cache takes the key. */
    public void publish(PacketTuple packet, int decisionCode, boolean keyCached) {
        first.publish(packet, decisionCode, keyCached);
    }

    /**
     * A publishing handle for one more verdict thread: its own single-producer ring, drained by
     * the publisher thread with the others (one per verdict queue).
     */
    public Producer producer() {
        VerdictRing ring = new VerdictRing(capacity);
        rings.add(ring);
        return new Producer(ring);
    }

    /** What one verdict thread publishes through. */
    public final class Producer {
        private final VerdictRing ring;

        private Producer(VerdictRing ring) {
            this.ring = ring;
        }

        /** Hot path (its one thread only): unless someone watches, one volatile read. */
        public void publish(PacketTuple packet, int decisionCode) {
            publish(packet, decisionCode, false);
        }

        /** As {@link #publish(PacketTuple, int)}; {@code keyCached}: the kernel's verdict cache takes the key. */
        public void publish(PacketTuple packet, int decisionCode, boolean keyCached) {
            publish(packet, decisionCode, keyCached, Decision.NOT_STAGED);
        }

        /** As {@link #publish(PacketTuple, int, boolean)}, with the staged policies' differing would-be code (or NOT_STAGED). */
        public void publish(PacketTuple packet, int decisionCode, boolean keyCached, int stagedCode) {
            if (watched) {
                ring.offer(packet, decisionCode, keyCached, stagedCode);
            }
        }
    }

    /**
     * A cut of an established connection, already explained (with the index that decided it).
     * Any thread; dropped and counted when nobody watches fast enough.
     */
    public void publishCut(PacketTuple tuple, Explanation explanation) {
        if (watched && !cuts.offer(new Cut(copy(tuple), explanation))) {
            undelivered.incrementAndGet();
        }
    }

    private static PacketTuple copy(PacketTuple t) {
        PacketTuple c = new PacketTuple();
        c.family = t.family;
        c.srcHi = t.srcHi;
        c.srcLo = t.srcLo;
        c.dstHi = t.dstHi;
        c.dstLo = t.dstLo;
        c.protocol = t.protocol;
        c.dstPort = t.dstPort;
        c.srcPort = t.srcPort;
        return c;
    }

    /** Verdicts lost because the ring was full or a watcher was not ready. */
    public long dropped() {
        long lost = undelivered.get();
        for (VerdictRing ring : rings) {
            lost += ring.dropped();
        }
        return lost;
    }

    public int watchers() {
        return watchers.size();
    }

    /** Open WatchVerdicts streams (not the control plane's upload). */
    public int watchStreams() {
        return watchStreams.get();
    }

    /** WatchVerdicts streams refused because {@link #MAX_WATCH_STREAMS} were open. */
    public long watchStreamsRefused() {
        return watchStreamsRefused.get();
    }

    /**
     * Where explained verdicts go: a WatchVerdicts stream, or the upload to the control plane.
     * Called on the feed's publisher thread only.
     */
    public interface Sink {
        /** False: this verdict is lost for the sink (counted), nothing is queued for it. */
        boolean isReady();

        /**
         * Asked first, for each matching verdict: false skips it before it is explained (the
         * sink's own sampling or coalescing; it counts what it skips). Explaining is most of the
         * feed's work.
         */
        default boolean wants(Seen verdict) {
            return true;
        }

        void onNext(Explanation verdict);

        /** The feed is closing. */
        default void onCompleted() {}
    }

    /** A WatchVerdicts stream, or RESOURCE_EXHAUSTED while {@link #MAX_WATCH_STREAMS} are open. */
    void watch(WatchVerdictsRequest request, ServerCallStreamObserver<Explanation> stream) {
        if (watchStreams.getAndUpdate(n -> n < MAX_WATCH_STREAMS ? n + 1 : n) >= MAX_WATCH_STREAMS) {
            watchStreamsRefused.incrementAndGet();
            stream.onError(Status.RESOURCE_EXHAUSTED
                    .withDescription("this agent serves at most " + MAX_WATCH_STREAMS
                            + " WatchVerdicts streams at once; close one")
                    .asRuntimeException());
            return;
        }
        IpAddress ip = request.getIp().isEmpty() ? null : IpAddress.parse(request.getIp());
        Watcher watcher = new Watcher(ip, request.getVerdict(), request.getStaged(), true, new Sink() {
            @Override
            public boolean isReady() {
                return stream.isReady();
            }

            @Override
            public void onNext(Explanation verdict) {
                stream.onNext(verdict);
            }

            @Override
            public void onCompleted() {
                stream.onCompleted();
            }
        });
        stream.setOnCancelHandler(() -> remove(watcher));
        add(watcher);
    }

    /**
     * Sends every verdict (or only {@code verdict}, unless unspecified) to {@code sink} until the
     * returned handle is closed.
     */
    public AutoCloseable subscribe(Verdict verdict, Sink sink) {
        return subscribe(verdict, false, sink);
    }

    /** As {@link #subscribe(Verdict, Sink)}; {@code stagedOnly}: only verdicts the staged policies would change. */
    public AutoCloseable subscribe(Verdict verdict, boolean stagedOnly, Sink sink) {
        Watcher watcher = new Watcher(null, verdict, stagedOnly, false, sink);
        add(watcher);
        return () -> remove(watcher);
    }

    private void add(Watcher watcher) {
        watchers.add(watcher);
        watched = true;
    }

    /** Once per watcher: the cancel handler and a failed send may both remove it. */
    private void remove(Watcher watcher) {
        if (watchers.remove(watcher) && watcher.counted()) {
            watchStreams.decrementAndGet();
        }
        watched = !watchers.isEmpty();
    }

    private void run() {
        while (running) {
            int n = 0;
            for (VerdictRing ring : rings) {
                n += ring.drain(this::deliver, 1024);
            }
            for (Cut cut; (cut = cuts.poll()) != null; n++) {
                send(cut.tuple(), cut.explanation().getVerdict(), cut.explanation(), false, false);
            }
            if (n == 0) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void deliver(PacketTuple packet, int decisionCode, boolean keyCached, int stagedCode) {
        Verdict verdict = Decision.allowed(decisionCode) ? Verdict.VERDICT_ALLOW : Verdict.VERDICT_DENY;
        send(packet, verdict, null, keyCached, stagedCode != Decision.NOT_STAGED);
    }

    /**
     * A verdict before it is explained, as a sink may coalesce it: the key (source, destination,
     * protocol, destination port), what was given, and the generation that decided it (verdicts of
     * one key under one generation explain alike). Not the source port.
     */
    public record Seen(
            int family,
            long srcHi,
            long srcLo,
            long dstHi,
            long dstLo,
            int protocol,
            int dstPort,
            Verdict verdict,
            boolean keyCached,
            boolean staged,
            boolean cut,
            Object generation) {}

    /** To every matching, ready watcher; explains (when not given) only if someone takes it. */
    private void send(PacketTuple packet, Verdict verdict, Explanation given, boolean keyCached, boolean staged) {
        Explanation explanation = given;
        Seen seen = null;
        for (Watcher w : watchers) {
            if (!w.matches(packet, verdict, staged)) {
                continue;
            }
            if (seen == null) {
                seen = new Seen(
                        packet.family,
                        packet.srcHi,
                        packet.srcLo,
                        packet.dstHi,
                        packet.dstLo,
                        packet.protocol,
                        packet.dstPort,
                        verdict,
                        keyCached,
                        staged,
                        given != null,
                        state.get());
            }
            if (!w.stream.wants(seen)) {
                continue;
            }
            if (!w.stream.isReady()) {
                undelivered.incrementAndGet();
                continue;
            }
            if (explanation == null) {
                explanation = explain(packet, verdict, keyCached, staged);
            }
            try {
                w.stream.onNext(explanation);
            } catch (RuntimeException e) {
                log.debug("verdict watcher gone: {}", e.toString());
                remove(w);
            }
        }
    }

    /**
     * Explains with the index current now; the verdict is the one actually given, which can differ
     * only when a new generation was swapped in between.
     */
    private Explanation explain(PacketTuple packet, Verdict verdict, boolean keyCached, boolean staged) {
        StateHolder.Generation current = state.get();
        Explanation.Builder out = current == null
                ? Explanation.newBuilder().setTuple(packet.toTuple())
                : new Explainer(current.state().index(), current.learned()).explain(packet).toBuilder();
        if (staged) {
            out.setStaged(StagedExplanations.wouldBe(current, packet, verdict));
        }
        return out.setVerdict(verdict).setCached(keyCached).build();
    }

    @Override
    public void close() {
        running = false;
        publisher.interrupt();
        try {
            publisher.join(2000); // onNext and onCompleted must not overlap on one stream
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Watcher w : watchers) {
            try {
                w.stream.onCompleted();
            } catch (RuntimeException ignored) {
                // the watcher went away meanwhile
            }
        }
        watchers.clear();
        watchStreams.set(0);
        watched = false;
    }

    private record Cut(PacketTuple tuple, Explanation explanation) {}

    /** @param counted a WatchVerdicts stream, counted against {@link #MAX_WATCH_STREAMS} */
    private record Watcher(IpAddress ip, Verdict verdict, boolean stagedOnly, boolean counted, Sink stream) {
        boolean matches(PacketTuple p, Verdict given, boolean staged) {
            return (staged || !stagedOnly)
                    && (ip == null
                            || ip.family() == p.family
                                    && (is(p.srcHi, p.srcLo, p.family) || is(p.dstHi, p.dstLo, p.family)))
                    && (verdict == Verdict.VERDICT_UNSPECIFIED || verdict == Verdict.UNRECOGNIZED || verdict == given);
        }

        private boolean is(long hi, long lo, int family) {
            // IPv4 lives in the low 32 bits; the parser need not clear the rest.
            return family == IpAddress.V4 ? ip.lo() == (lo & 0xFFFF_FFFFL) : ip.hi() == hi && ip.lo() == lo;
        }
    }
}
