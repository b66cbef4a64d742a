// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import com.google.protobuf.Timestamp;
import io.grpc.Channel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.sync.Backoff;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.VerdictDemand;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.proto.v1.VerdictUpload;
import io.kubeverdict.runtime.FatalThreads;
import io.kubeverdict.runtime.logging.LogLimiter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's half of `kube-verdict observe`: one ReportVerdicts stream to the control plane,
 * kept open (reconnected with the sync backoff). While the control plane wants verdicts it
 * subscribes to the {@link VerdictFeed} (which costs the verdict loop nothing until then). A
 * verdict whose key already waits to be sent is counted into that event ({@link CoalescedEvents});
 * the others are sampled down to the upload rate ({@link VerdictSampler}) before the feed explains
 * them, queued (at most 1024) and sent in batches while the stream is ready, every 100 ms or, while
 * only the flow history wants them, every second ({@link SendPace}); whatever it cannot send is
 * counted and reported upstream as {@code lost}.
 */
public final class VerdictUplink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(VerdictUplink.class);
    private static final int QUEUE = 1024;
    private static final int BATCH = 256;

    private final Channel channel;
    private final String node;
    private final VerdictFeed feed;
    private final int perSecond;
    private final Clock clock;
    private final ScheduledExecutorService executor;
    private final CoalescedEvents events = new CoalescedEvents(QUEUE);
    private final SendPace pace = new SendPace(BATCH);
    private final AtomicLong lost = new AtomicLong();
    private final Counter sent;
    private final Counter lostCounter;
    private final LogLimiter failureLog = new LogLimiter(1, TimeUnit.MINUTES);

    // Executor thread only.
    private ClientCallStreamObserver<VerdictUpload> call;
    private AutoCloseable subscription;
    private long lostReported;
    private int attempt;
    private boolean closed;

    /** @param perSecond most verdicts uploaded per second (more are sampled and counted as lost) */
    public VerdictUplink(
            Channel channel, String node, VerdictFeed feed, int perSecond, MeterRegistry registry, Clock clock) {
        this.channel = channel;
        this.node = node;
        this.feed = feed;
        this.perSecond = perSecond;
        this.clock = clock;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kv-verdict-uplink");
            t.setDaemon(true);
            return t;
        });
        sent = Counter.builder("kubeverdict_observe_events_sent")
                .description("Verdict events uploaded to the control plane for kube-verdict observe")
                .register(registry);
        lostCounter = Counter.builder("kubeverdict_observe_events_lost")
                .description("Verdict events not uploaded while observed: sampled out above the upload rate, or the "
                        + "upload queue was full")
                .register(registry);
        FunctionCounter.builder("kubeverdict_verdict_feed_dropped", feed, VerdictFeed::dropped)
                .description("Verdicts the watch feed lost: its ring was full, or a watcher was not ready")
                .register(registry);
    }

    public VerdictUplink start() {
        executor.execute(this::connect);
        executor.scheduleWithFixedDelay(
                FatalThreads.guard(this::flush), SendPace.TICK_MILLIS, SendPace.TICK_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    private void connect() {
        if (closed) {
            return;
        }
        Stream stream = new Stream();
        PolicySyncGrpc.newStub(channel).reportVerdicts(stream); // beforeStart runs in here
        call = stream.requests;
        try {
            call.onNext(VerdictUpload.newBuilder().setNode(node).build()); // names the stream; buffered until sent
        } catch (RuntimeException e) {
            ended(call, e);
            return;
        }
        lost.set(0); // cumulative per stream, as the control plane reads it
        lostReported = 0;
    }

    /** One ReportVerdicts call; its callbacks hop onto the executor. */
    private final class Stream implements ClientResponseObserver<VerdictUpload, VerdictDemand> {
        private ClientCallStreamObserver<VerdictUpload> requests;

        @Override
        public void beforeStart(ClientCallStreamObserver<VerdictUpload> requestStream) {
            requests = requestStream;
        }

        @Override
        public void onNext(VerdictDemand demand) {
            executor.execute(() -> demand(requests, demand));
        }

        @Override
        public void onError(Throwable t) {
            executor.execute(() -> ended(requests, t));
        }

        @Override
        public void onCompleted() {
            executor.execute(() -> ended(requests, null));
        }
    }

    /** What the control plane wants now (it answers the stream's first message, then on every change). */
    private void demand(ClientCallStreamObserver<VerdictUpload> requests, VerdictDemand demand) {
        if (closed || requests != call) {
            return; // an older stream
        }
        attempt = 0;
        failureLog.reset();
        unsubscribe();
        pace.demand(demand.getHistoryOnly());
        if (demand.getWanted()) {
            VerdictSampler sampler = new VerdictSampler(
                    perSecond,
                    System::nanoTime,
                    () -> ThreadLocalRandom.current().nextDouble());
            subscription = feed.subscribe(demand.getVerdict(), demand.getStaged(), new VerdictFeed.Sink() {
                private VerdictFeed.Seen next; // the verdict wants() let through (the feed's thread)

                @Override
                public boolean wants(VerdictFeed.Seen verdict) {
                    if (events.join(verdict)) {
                        return false; // counted into its key's waiting event, not explained again
                    }
                    if (sampler.admit()) {
                        next = verdict;
                        return true;
                    }
                    countLost(); // sampled out, and not explained
                    return false;
                }

                @Override
                public boolean isReady() {
                    return true; // queued here; the queue's overflow is counted as lost
                }

                @Override
                public void onNext(Explanation verdict) {
                    if (!events.add(next, event(verdict))) {
                        countLost();
                    }
                }
            });
            log.debug(
                    "control plane wants verdicts ({}{})",
                    demand.getVerdict(),
                    demand.getStaged() ? ", staged only" : "");
        }
    }

    private void countLost() {
        lost.incrementAndGet();
        lostCounter.increment();
    }

    private VerdictEvent event(Explanation verdict) {
        long millis = clock.millis();
        return VerdictEvent.newBuilder()
                .setNode(node)
                .setTime(Timestamp.newBuilder()
                        .setSeconds(Math.floorDiv(millis, 1000))
                        .setNanos((int) Math.floorMod(millis, 1000) * 1_000_000))
                .setExplanation(verdict)
                .build();
    }

    private void flush() {
        ClientCallStreamObserver<VerdictUpload> c = call;
        if (c == null || closed || !pace.due(System.nanoTime(), events.size())) {
            return;
        }
        pace.flushed(System.nanoTime());
        try {
            while (c.isReady() && (!events.isEmpty() || lost.get() != lostReported)) {
                List<VerdictEvent> batch = events.drain(BATCH);
                long lostNow = lost.get();
                c.onNext(VerdictUpload.newBuilder()
                        .addAllEvents(batch)
                        .setLost(lostNow)
                        .build());
                sent.increment(batch.size());
                lostReported = lostNow;
            }
        } catch (RuntimeException e) {
            ended(c, e);
        }
    }

    private void ended(ClientCallStreamObserver<VerdictUpload> requests, Throwable t) {
        if (call != requests) {
            return; // an older stream, already replaced
        }
        unsubscribe();
        events.clear();
        call = null;
        if (closed) {
            return;
        }
        long suppressed = failureLog.tryAcquire();
        if (suppressed >= 0) {
            log.info(
                    "verdict upload stream ended ({}); reconnecting{}",
                    t == null ? "closed by the control plane" : t.toString(),
                    suppressed > 0 ? " (" + suppressed + " similar suppressed)" : "");
        }
        long delay = Backoff.DEFAULT
                .delay(attempt++, ThreadLocalRandom.current().nextDouble())
                .toMillis();
        executor.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
    }

    private void unsubscribe() {
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception ignored) {
                // removing a watcher does not fail
            }
            subscription = null;
        }
    }

    @Override
    public void close() {
        executor.execute(() -> {
            closed = true;
            unsubscribe();
            if (call != null) {
                try {
                    call.onCompleted();
                } catch (RuntimeException ignored) {
                    // already gone
                }
            }
        });
        executor.shutdown();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        executor.shutdownNow();
    }
}
