// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.FatalThreads;
import io.kubeverdict.runtime.logging.LogLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the control plane's PolicySync stream for this node on one thread.
 *
 * <p>Each stream starts a fresh {@link SnapshotAssembler}: the previous state stays enforced, and
 * nothing reaches the {@link Enforcer} until the stream's InSync; then the whole new state is
 * enforced at once. After that, when the control plane ends each change with an InSync (it says so
 * in the first one: {@code change_boundaries}), the state is enforced only at those InSyncs, at
 * most once per burst (its last), so a change that spans several messages (a large IP set in
 * chunks) is never enforced half-arrived, and a stream that breaks inside a change leaves the last
 * complete state enforced. With an older control plane that marks no boundaries, every burst of
 * deltas (what has arrived by the time the burst is applied) is enforced as one new generation.
 * Messages are applied to the assembler and requested from the stream as they come either way,
 * so flow control does not wait for a boundary. A sequence gap or a message that does not
 * fit abandons the stream and resyncs on a new one. Each attempt first dials ({@link ChannelDial}:
 * the channel's own connect backoff, which grows to two minutes, cut short); a stream is opened
 * only once a connection stands. A stream that ended is retried after a short full-jitter
 * {@link Backoff} (at most 1 s by default); a dial waits for its connection for a shorter one
 * ({@link Backoff#UNREACHABLE}, at most 250 ms) and then dials again, so a control plane that
 * restarts is found within a fraction of a second of listening, by a fleet spread over that
 * fraction. While it is away the last state keeps being enforced.
 *
 * <p>Flow control: at most {@link #WINDOW} messages are requested ahead of what has been applied,
 * so a fast control plane cannot fill the agent's memory.
 */
public final class SyncClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SyncClient.class);
    static final int WINDOW = 128;
    static final int MAX_BURST = 512;
    /** While the control plane stays away, how often the retries are logged. */
    private static final Duration LOG_EVERY = Duration.ofSeconds(30);

    private final Channel channel;
    private final SyncRequest request;
    private final Supplier<SnapshotAssembler> builders;
    private final Enforcer enforcer;
    private final AppliedListener listener;
    private final Backoff backoff;
    private final Backoff unreachable;
    private final DoubleSupplier random;
    private final SyncStatus status;
    // A control plane that keeps ending streams would otherwise cost a line per backoff step, forever.
    private final LogLimiter endedLog = new LogLimiter(1, TimeUnit.MINUTES);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile StreamListener active;
    /** Streams in a row that ended before InSync (sync thread only); picks the backoff band. */
    private int failedAttempts;

    private long lastRetryLogNanos;
    /** Why the control plane refused the last stream (not in the cluster, not allowed), or null. */
    private volatile Status refusal;

    private final ResumePoint resumePoint = new ResumePoint();

    /** With one backoff for streams that ended and for dials that found nothing. */
    public SyncClient(
            Channel channel,
            SyncRequest request,
            Supplier<SnapshotAssembler> builders,
            Enforcer enforcer,
            AppliedListener listener,
            Backoff backoff,
            DoubleSupplier random,
            SyncStatus status) {
        this(channel, request, builders, enforcer, listener, backoff, backoff, random, status);
    }

    /**
     * @param backoff after a stream that ended (refused, broken, cut: a server answered)
     * @param unreachable how long a dial waits for its connection before it dials again (refused, unreachable)
     */
    public SyncClient(
            Channel channel,
            SyncRequest request,
            Supplier<SnapshotAssembler> builders,
            Enforcer enforcer,
            AppliedListener listener,
            Backoff backoff,
            Backoff unreachable,
            DoubleSupplier random,
            SyncStatus status) {
        this.channel = channel;
        this.request = request;
        this.builders = builders;
        this.enforcer = enforcer;
        this.listener = listener;
        this.backoff = backoff;
        this.unreachable = unreachable;
        this.random = random;
        this.status = status;
        this.thread = FatalThreads.worker("kv-sync", this::run);
        this.thread.setDaemon(true);
    }

    /** ", N similar suppressed" after a rate-limited line that stood for more than itself. */
    private static String suppressedNote(long suppressed) {
        return suppressed > 0 ? " (" + suppressed + " similar suppressed)" : "";
    }

    /**
     * Before {@link #start}: the state the agent loaded from its state file (null: none may be
     * offered), asked for on the sync thread before the first stream, which the streams offer to
     * resume from until one enforces a state of its own ({@link ResumePoint}).
     */
    public SyncClient resumingFrom(Supplier<NodeSnapshot> loaded) {
        resumePoint.loadedAtStart(loaded);
        return this;
    }

    public SyncClient start() {
        thread.start();
        return this;
    }

    public SyncStatus status() {
        return status;
    }

    private void run() {
        while (running) {
            boolean reachedSync = false;
            boolean answered = true;
            try {
                // Nothing answers: dial again after a short wait (the wait for this dial), no stream opened.
                answered = ChannelDial.dial(channel, unreachable.delay(failedAttempts, random.getAsDouble()))
                        != ChannelDial.Outcome.NOT_READY;
                if (answered) {
                    reachedSync = followOneStream();
                }
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                log.warn("sync stream failed", e);
            } finally {
                status.connected(false);
            }
            if (!running) {
                break;
            }
            if (reachedSync) {
                failedAttempts = 0;
            }
            Duration delay = answered ? backoff.delay(failedAttempts, random.getAsDouble()) : Duration.ZERO;
            failedAttempts++;
            status.reconnecting();
            Status refused = refusal;
            if (refused != null && loudRetry()) {
                // Nothing changes by itself here: a wrong --node, identity or RBAC. Say so loudly.
                log.error(
                        "the control plane REFUSED node {}: {} {}; enforcing sequence {} meanwhile, retrying in {} ms "
                                + "(attempt {})",
                        request.getNode(),
                        refused.getCode(),
                        refused.getDescription(),
                        status.appliedSequence(),
                        delay.toMillis(),
                        failedAttempts);
            } else if (refused == null && loudRetry()) {
                log.info(
                        "{} (attempt {}), enforcing sequence {}",
                        answered
                                ? "reconnecting to the control plane in " + delay.toMillis() + " ms"
                                : "the control plane does not answer; dialling again",
                        failedAttempts,
                        status.appliedSequence());
            }
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                break;
            }
        }
        log.debug("sync thread ends");
    }

    /** The status of a stream the control plane refused for this node, or null for any other end. */
    static Status refusal(Throwable t) {
        Status s = Status.fromThrowable(t);
        return switch (s.getCode()) {
            case NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT -> s;
            default -> null;
        };
    }

    /**
     * Retries come about every second while the control plane is away: log the first few of a
     * row, then one every {@link #LOG_EVERY}.
     */
    private boolean loudRetry() {
        long now = System.nanoTime();
        if (failedAttempts <= 3 || now - lastRetryLogNanos >= LOG_EVERY.toNanos()) {
            lastRetryLogNanos = now;
            return true;
        }
        return false;
    }

    /** Follows one stream until it ends or must be abandoned; returns whether it reached InSync. */
    private boolean followOneStream() throws InterruptedException {
        SyncRequest offer = resumePoint.request(request); // the first reads the state file
        StreamListener stream = new StreamListener();
        active = stream;
        if (!running) {
            return false;
        }
        ClientCalls.asyncServerStreamingCall(
                channel.newCall(PolicySyncGrpc.getSyncMethod(), CallOptions.DEFAULT), offer, stream);
        SnapshotAssembler builder = builders.get();
        boolean inSync = false;
        // Whether this stream's control plane ends every change with an InSync (its first InSync
        // says so): then only the states at those InSyncs are enforced.
        boolean boundaries = false;
        long eventTime = 0; // the latest event time applied since the last enforce
        List<ToAgent> burst = new ArrayList<>();
        try {
            while (running) {
                burst.clear();
                Object first = stream.events.take();
                Object end = collectBurst(first, stream.events, burst);
                int requested = 0;
                for (int i = 0; i < burst.size(); i++) {
                    ToAgent message = burst.get(i);
                    status.connected(true);
                    status.received(message.getSequence(), System.nanoTime());
                    try {
                        resumePoint.beforeApply(message, builder.lastSequence() < 0 && !inSync, builder);
                        if (builder.apply(message) == ToAgent.PayloadCase.NODE_UPDATE // checks the sequence too
                                && !builder.podCidrProblems().isEmpty()) {
                            log.warn(
                                    "sequence {}: the node's pod ranges: {}",
                                    message.getSequence(),
                                    builder.podCidrProblems());
                        }
                    } catch (ResyncRequiredException e) {
                        log.warn("{}; resyncing", e.getMessage());
                        status.resync();
                        return inSync;
                    }
                    eventTime = Math.max(eventTime, message.getEventTimeUnixNanos());
                    if (message.hasInSync() && !inSync) {
                        inSync = true;
                        boundaries = message.getInSync().getChangeBoundaries();
                        refusal = null;
                        log.info(
                                "in sync at sequence {}{}{}",
                                message.getSequence(),
                                message.getInSync().getResumed() ? " (resumed: the enforced state is current)" : "",
                                boundaries
                                        ? ""
                                        : " (the control plane marks no change boundaries: enforcing what has arrived)");
                    }
                    if (inSync && endsCompleteState(burst, i, boundaries)) {
                        // Ask for more before the (possibly slow) enforce, as much as was applied.
                        stream.request(i + 1 - requested);
                        requested = i + 1;
                        enforce(builder, message.getSequence(), eventTime);
                        eventTime = 0;
                    }
                }
                if (burst.size() > requested) {
                    stream.request(burst.size() - requested);
                }
                if (end != null) {
                    if (!running) {
                        return inSync;
                    } else if (end instanceof Throwable t) {
                        refusal = refusal(t);
                        if (inSync || failedAttempts == 0) { // the first failure of a row; retries log below
                            log.warn("sync stream broke: {}", t.toString());
                        } else {
                            log.debug("sync stream broke: {}", t.toString());
                        }
                    } else {
                        refusal = null;
                        long suppressed = endedLog.tryAcquire();
                        if (suppressed >= 0) {
                            log.warn("control plane ended the sync stream{}", suppressedNote(suppressed));
                        }
                    }
                    return inSync;
                }
            }
            return inSync;
        } catch (EnforceFailed e) {
            status.resync();
            return inSync;
        } finally {
            stream.cancel("sync stream abandoned");
        }
    }

    /**
     * Whether the state after the {@code i}th message of the burst is one to enforce. With change
     * boundaries: an InSync, the burst's last (a burst that holds several changes is enforced
     * once, at its last complete one; what follows it is a change that has only partly arrived).
     * Without (an older control plane): the burst's last message, whatever has arrived.
     */
    static boolean endsCompleteState(List<ToAgent> burst, int i, boolean boundaries) {
        if (!boundaries) {
            return i == burst.size() - 1;
        }
        if (!burst.get(i).hasInSync()) {
            return false;
        }
        for (int j = i + 1; j < burst.size(); j++) {
            if (burst.get(j).hasInSync()) {
                return false;
            }
        }
        return true;
    }

    private void enforce(SnapshotAssembler builder, long sequence, long eventTime) {
        try {
            NodeSnapshot snapshot = builder.snapshot();
            enforcer.enforce(snapshot, sequence);
            resumePoint.enforced(snapshot);
        } catch (Exception e) {
            resumePoint.enforced(null); // what the kernel holds is not known now: the next stream starts from nothing
            status.applyFailed();
            log.error("applying sequence {} failed; resyncing", sequence, e);
            throw new EnforceFailed();
        }
        status.applied(sequence, eventTime);
        listener.applied(sequence, eventTime);
    }

    /** Takes what has already arrived after {@code first}; returns the stream end if seen. */
    private static Object collectBurst(Object first, BlockingQueue<Object> events, List<ToAgent> burst) {
        Object next = first;
        while (next != null) {
            if (!(next instanceof ToAgent message)) {
                return next;
            }
            burst.add(message);
            if (burst.size() >= MAX_BURST) {
                return null;
            }
            next = events.poll();
        }
        return null;
    }

    /** Whether the sync thread is still alive: after {@link #close}, one that outlasted its join. */
    public boolean isRunning() {
        return thread.isAlive();
    }

    @Override
    public void close() {
        running = false;
        StreamListener stream = active;
        if (stream != null) {
            stream.cancel("agent stopping");
        }
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class EnforceFailed extends RuntimeException {
        EnforceFailed() {
            super(null, null, false, false);
        }
    }

    /** Hands a stream's messages and its end (a Throwable or END) to the sync thread. */
    private static final class StreamListener implements ClientResponseObserver<SyncRequest, ToAgent> {
        static final Object END = new Object();
        final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        private volatile ClientCallStreamObserver<SyncRequest> call;

        @Override
        public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
            requestStream.disableAutoRequestWithInitial(WINDOW);
            call = requestStream;
        }

        void request(int n) {
            ClientCallStreamObserver<SyncRequest> c = call;
            if (c != null) {
                c.request(n);
            }
        }

        void cancel(String why) {
            ClientCallStreamObserver<SyncRequest> c = call;
            if (c != null) {
                c.cancel(why, null);
            }
        }

        @Override
        public void onNext(ToAgent value) {
            events.add(value);
        }

        @Override
        public void onError(Throwable t) {
            events.add(t);
        }

        @Override
        public void onCompleted() {
            events.add(END);
        }
    }
}
