package io.kubeverdict.agent.sync;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.sync.ResyncRequiredException;
import io.kubeverdict.sync.SnapshotAssembler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import io.kubeverdict.runtime.logging.LogLimiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the control plane's PolicySync stream for this node on one thread.
 *
 * <p>Each stream starts a fresh {@link SnapshotAssembler}: the previous state stays enforced, and
 * nothing reaches the {@link Enforcer} until the stream's InSync; then the whole new state is
 * enforced at once, and after that every burst of deltas (what has arrived by the time the last
 * burst is applied) is enforced as one new generation. A sequence gap or a message that does not
 * fit abandons the stream and resyncs on a new one. A broken stream is retried with exponential
 * backoff and jitter; while the control plane is away the last state keeps being enforced.
 *
 * <p>Flow control: at most {@link #WINDOW} messages are requested ahead of what has been applied,
 * so a fast control plane cannot fill the agent's memory.
 */
public final class SyncClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SyncClient.class);
    static final int WINDOW = 128;
    static final int MAX_BURST = 512;

    private final Channel channel;
    private final SyncRequest request;
    private final Supplier<SnapshotAssembler> builders;
    private final Enforcer enforcer;
    private final AppliedListener listener;
    private final Backoff backoff;
    private final DoubleSupplier random;
    private final SyncStatus status;
    // A control plane that stays away would otherwise cost two lines per backoff step, forever.
    private final LogLimiter reconnectLog = new LogLimiter(1, TimeUnit.MINUTES);
    private final LogLimiter brokenLog = new LogLimiter(1, TimeUnit.MINUTES);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile StreamListener active;

    public SyncClient(Channel channel, SyncRequest request, Supplier<SnapshotAssembler> builders,
                      Enforcer enforcer, AppliedListener listener, Backoff backoff,
                      DoubleSupplier random, SyncStatus status) {
        this.channel = channel;
        this.request = request;
        this.builders = builders;
        this.enforcer = enforcer;
        this.listener = listener;
        this.backoff = backoff;
        this.random = random;
        this.status = status;
        this.thread = new Thread(this::run, "kv-sync");
        this.thread.setDaemon(true);
    }

    /** ", N similar suppressed" after a rate-limited line that stood for more than itself. */
    private static String suppressedNote(long suppressed) {
        return suppressed > 0 ? " (" + suppressed + " similar suppressed)" : "";
    }

    public SyncClient start() {
        thread.start();
        return this;
    }

    public SyncStatus status() {
        return status;
    }

    private void run() {
        int attempt = 0;
        while (running) {
            boolean reachedSync = false;
            try {
                reachedSync = followOneStream();
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
                attempt = 0;
            }
            if (reachedSync) {
                reconnectLog.reset();
                brokenLog.reset();
            }
            Duration delay = backoff.delay(attempt++, random.getAsDouble());
            status.reconnecting();
            long suppressed = reconnectLog.tryAcquire();
            if (suppressed >= 0) {
                log.info("reconnecting to the control plane in {} ms (attempt {}), enforcing sequence {}{}",
                        delay.toMillis(), attempt, status.appliedSequence(), suppressedNote(suppressed));
            }
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                break;
            }
        }
        log.debug("sync thread ends");
    }

    /** Follows one stream until it ends or must be abandoned; returns whether it reached InSync. */
    private boolean followOneStream() throws InterruptedException {
        StreamListener stream = new StreamListener();
        active = stream;
        if (!running) {
            return false;
        }
        ClientCalls.asyncServerStreamingCall(
                channel.newCall(PolicySyncGrpc.getSyncMethod(), CallOptions.DEFAULT), request, stream);
        SnapshotAssembler builder = builders.get();
        boolean inSync = false;
        List<ToAgent> burst = new ArrayList<>();
        try {
            while (running) {
                burst.clear();
                Object first = stream.events.take();
                Object end = collectBurst(first, stream.events, burst);
                long lastSequence = -1;
                long eventTime = 0;
                for (ToAgent message : burst) {
                    status.connected(true);
                    status.received(message.getSequence(), System.nanoTime());
                    try {
                        builder.apply(message); // checks the sequence too
                    } catch (ResyncRequiredException e) {
                        log.warn("{}; resyncing", e.getMessage());
                        status.resync();
                        return inSync;
                    }
                    if (message.hasInSync() && !inSync) {
                        inSync = true;
                        log.info("in sync at sequence {}", message.getSequence());
                    }
                    lastSequence = message.getSequence();
                    eventTime = Math.max(eventTime, message.getEventTimeUnixNanos());
                }
                if (!burst.isEmpty()) {
                    stream.request(burst.size());
                    if (inSync) {
                        enforce(builder, lastSequence, eventTime);
                    }
                }
                if (end != null) {
                    if (!running) {
                        return inSync;
                    } else {
                        long suppressed = brokenLog.tryAcquire();
                        if (suppressed >= 0) {
                            log.warn("{}{}", end instanceof Throwable t ? "sync stream broke: " + t
                                    : "control plane ended the sync stream", suppressedNote(suppressed));
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

    private void enforce(SnapshotAssembler builder, long sequence, long eventTime) {
        try {
            enforcer.enforce(builder.snapshot(), sequence);
        } catch (Exception e) {
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
