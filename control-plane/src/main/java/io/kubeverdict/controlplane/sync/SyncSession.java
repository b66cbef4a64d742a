// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * One agent's Sync stream. The session remembers what it has sent (the last snapshot it diffed to)
 * and, whenever the transport is ready, diffs that against the node's current snapshot and sends
 * the result. It never queues more than one diff: changes that happen while the agent is slow
 * collapse into the next diff. Each diff ends with an InSync (the first one ends the snapshot), so
 * the agent knows where a change that spans several messages is complete. A session that cannot
 * send for too long is cut (see
 * {@link #cutIfStalled}); the agent reconnects and gets a fresh full snapshot. The full snapshot
 * of a new stream waits for a permit of the {@link SnapshotAdmission}, held until its InSync is
 * handed to the transport.
 */
final class SyncSession implements SnapshotAdmission.Waiter {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(SyncSession.class);
    /** Sent-message marks kept for latency attribution; older ones are dropped. */
    private static final int MAX_MARKS = 4096;
    /** Metric tag per payload kind, computed once rather than per message. */
    private static final String[] PAYLOAD_NAMES = java.util.Arrays.stream(ToAgent.PayloadCase.values())
            .map(c -> c.name().toLowerCase(java.util.Locale.ROOT))
            .toArray(String[]::new);

    private final String node;
    private final String agentVersion;
    private final ServerCallStreamObserver<StampedMessage> out;
    private final SnapshotHub hub;
    private final SnapshotDiff differ;
    private final SendQueue senders;
    private final ControlPlaneMetrics metrics;
    private final LongSupplier nanoTime;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final SnapshotAdmission admission;
    /** NONE -> WAITING -> HOLDING -> DONE, or -> DONE when the stream ends; see {@link #admitted}. */
    private final AtomicInteger admissionState = new AtomicInteger(NONE);

    private static final int NONE = 0;
    private static final int WAITING = 1;
    private static final int HOLDING = 2;
    private static final int DONE = 3;
    private final Runnable wakeUp = this::wake;
    private final Runnable drain = this::drain;
    private volatile Runnable onClosed = () -> {};
    private volatile java.util.function.LongConsumer onLatency = latency -> {};

    // Guarded by this.
    private IndexedSnapshot lastSent;
    /** The digest of the state the agent enforces (SyncRequest.resume_digest), until the first diff. */
    private ByteString resumeDigest = ByteString.EMPTY;

    private final ArrayDeque<Payload> pending = new ArrayDeque<>();
    private long pendingEventTime;
    private String pendingRevision = ""; // source revision the queued diff (or its absence) brings the agent to
    private boolean snapshotQueued;
    private boolean inSync;
    private long sequence;
    private boolean closed;
    private final ArrayDeque<long[]> marks = new ArrayDeque<>();
    /** (sequence of an InSync, the snapshot version it completes), oldest first, for {@link #appliedVersion}. */
    private final ArrayDeque<long[]> boundaries = new ArrayDeque<>();

    private volatile long sentSequence;
    private volatile long appliedSequence;
    private volatile long appliedVersion;
    private volatile String sentRevision = "";
    private volatile long stalledSinceNanos;

    SyncSession(
            String node,
            String agentVersion,
            ServerCallStreamObserver<StampedMessage> out,
            SnapshotHub hub,
            SnapshotDiff differ,
            SnapshotAdmission admission,
            SendQueue senders,
            ControlPlaneMetrics metrics,
            LongSupplier nanoTime) {
        this.node = node;
        this.admission = admission;
        this.agentVersion = agentVersion;
        this.out = out;
        this.hub = hub;
        this.differ = differ;
        this.senders = senders;
        this.metrics = metrics;
        this.nanoTime = nanoTime;
        this.lastSent = IndexedSnapshot.empty(node);
    }

    /** The agent's resume digest (SyncRequest.resume_digest); call before the first {@link #wake()}. */
    void resumeFrom(ByteString digest) {
        synchronized (this) {
            resumeDigest = digest;
        }
    }

    String node() {
        return node;
    }

    String agentVersion() {
        return agentVersion;
    }

    long sentSequence() {
        return sentSequence;
    }

    long appliedSequence() {
        return appliedSequence;
    }

    /**
     * The newest snapshot version ({@link IndexedSnapshot#version()}) the agent has applied in
     * full: the one the last InSync up to the applied sequence completed (0: none yet).
     */
    long appliedVersion() {
        return appliedVersion;
    }

    /** The source revision whose snapshot of the node this stream has handed over in full. */
    String sentRevision() {
        return sentRevision;
    }

    boolean inSync() {
        synchronized (this) {
            return inSync;
        }
    }

    /** Told each programming latency (nanos) an applied report completes, after the metric. */
    void onLatency(java.util.function.LongConsumer listener) {
        this.onLatency = listener;
    }

    /** Runs once when the session ends, however it ends. */
    void onClosed(Runnable callback) {
        this.onClosed = callback;
    }

    void start() {
        hub.subscribe(node, wakeUp);
        wake();
    }

    /** Something may be sendable: the transport became ready or the node's snapshot changed. */
    void wake() {
        if (scheduled.compareAndSet(false, true)) {
            senders.submit(drain);
        }
    }

    private void drain() {
        scheduled.set(false);
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                sendWhileReady();
            } catch (RuntimeException e) {
                // The call was cancelled under us (onNext after cancel throws); the cancel handler closes.
                closeLocked();
            }
        }
    }

    private void sendWhileReady() {
        while (true) {
            if (pending.isEmpty() && !refill()) {
                // Written after sentSequence, so a reader that sees the revision sees its sequence.
                sentRevision = pendingRevision;
                stalledSinceNanos = 0;
                return;
            }
            if (!out.isReady()) {
                if (stalledSinceNanos == 0) {
                    stalledSinceNanos = Math.max(1, nanoTime.getAsLong());
                }
                return;
            }
            Payload msg = pending.poll();
            boolean isInSync = msg.message().hasInSync();
            long seq = ++sequence;
            // 0 for the initial snapshot and its InSync; a change's boundary carries the change's
            // time, so the latency mark sits on it, the sequence the agent reports once enforced.
            long eventTime = pendingEventTime;
            // The payload's bytes may be shared with other streams; only the envelope is ours.
            StampedMessage stamped = new StampedMessage(seq, eventTime, msg);
            // Record before handing it over: the agent may read, apply and report it before
            // onNext returns, and its report must find the sequence and its event time.
            sentSequence = seq;
            if (pending.isEmpty() && eventTime != 0) {
                mark(seq, eventTime);
            }
            out.onNext(stamped);
            metrics.messageSent(PAYLOAD_NAMES[msg.message().getPayloadCase().ordinal()]);
            if (isInSync) {
                // Only one diff is queued at a time, and lastSent is its target.
                boundaries.addLast(new long[] {seq, lastSent.version()});
                if (boundaries.size() > MAX_MARKS) {
                    boundaries.removeFirst();
                }
                inSync = true;
                if (admissionState.compareAndSet(HOLDING, DONE)) {
                    admission.release();
                }
            }
            stalledSinceNanos = 0;
        }
    }

    /** Queues the diff to the node's current snapshot; false when there is nothing to send. */
    private boolean refill() {
        if (!hub.isReady()) {
            return false;
        }
        if (!snapshotQueued && !hub.inCluster(node)) {
            refuse(Status.NOT_FOUND.withDescription("node '" + node + "' is not in the cluster (no Node object, "
                    + "no pod placed on it): check the agent's --node"));
            return false;
        }
        if (!snapshotQueued && resumes()) {
            return true;
        }
        if (!snapshotQueued && !holdsPermit()) {
            return false; // in line for a full snapshot; admitted() wakes us
        }
        // Revision before snapshot: the hub publishes a revision after its snapshots, so the
        // snapshot read next is at least the one of that revision.
        String revision = hub.sourceRevision();
        IndexedSnapshot target = hub.current(node);
        if (snapshotQueued && target.version() == lastSent.version()) {
            pendingRevision = revision;
            return false;
        }
        pendingRevision = revision;
        List<Payload> msgs = differ.diff(lastSent, target);
        pendingEventTime = snapshotQueued ? hub.earliestEventTime(node, lastSent.version(), target.version()) : 0;
        lastSent = target;
        pending.addAll(msgs);
        // The InSync ends the snapshot, then each change (one diff, however many messages): the
        // agent enforces only at InSyncs, never a change that has partly arrived.
        if (!snapshotQueued || !msgs.isEmpty()) {
            pending.add(Payload.IN_SYNC);
            snapshotQueued = true;
        }
        return !pending.isEmpty();
    }

    /**
     * Whether the agent enforces exactly the node's current snapshot (its resume digest is that
     * snapshot's, compared once): then the stream starts there with a resumed InSync alone, without
     * a permit; else it gets the full snapshot.
     */
    private boolean resumes() {
        ByteString digest = resumeDigest;
        if (digest.isEmpty()) {
            return false;
        }
        resumeDigest = ByteString.EMPTY;
        String revision = hub.sourceRevision(); // before the snapshot, as in refill()
        IndexedSnapshot target = hub.current(node);
        if (!SnapshotDigest.matches(target.snapshot(), digest)) {
            log.debug("node {} resumes from another state than the current one: full snapshot", node);
            return false;
        }
        pendingRevision = revision;
        pendingEventTime = 0;
        lastSent = target;
        pending.add(Payload.RESUMED);
        snapshotQueued = true;
        metrics.syncResumed();
        return true;
    }

    /** Whether this stream may build its full snapshot now; joins the line the first time. */
    private boolean holdsPermit() {
        int state = admissionState.get();
        if (state == NONE) {
            admissionState.set(WAITING);
            if (admission.admitOrQueue(this)) {
                admissionState.set(HOLDING);
                return true;
            }
            return false;
        }
        return state == HOLDING;
    }

    /** Our turn in line (called by whoever released the permit, on their thread). */
    @Override
    public void admitted() {
        if (admissionState.compareAndSet(WAITING, HOLDING)) {
            wake();
        } else {
            admission.release(); // the stream ended meanwhile: pass the permit on
        }
    }

    private void mark(long seq, long eventTime) {
        marks.addLast(new long[] {seq, eventTime});
        if (marks.size() > MAX_MARKS) {
            marks.removeFirst();
        }
    }

    /** The agent applied everything up to {@code seq}: records the latency of each change it covers. */
    void applied(long seq, long nowUnixNanos) {
        synchronized (this) {
            if (seq > sequence) {
                seq = sequence; // a report from a previous stream of this node; cannot be ahead of us
            }
            appliedSequence = Math.max(appliedSequence, seq);
            while (!boundaries.isEmpty() && boundaries.peekFirst()[0] <= seq) {
                appliedVersion = Math.max(appliedVersion, boundaries.removeFirst()[1]);
            }
            while (!marks.isEmpty() && marks.peekFirst()[0] <= seq) {
                long latency = nowUnixNanos - marks.removeFirst()[1];
                metrics.programmingLatency(latency);
                onLatency.accept(latency);
            }
        }
    }

    /** Cancels a stream that has wanted to send but could not for longer than {@code timeoutNanos}. */
    boolean cutIfStalled(long timeoutNanos) {
        long since = stalledSinceNanos;
        if (since == 0 || nanoTime.getAsLong() - since < timeoutNanos) {
            return false;
        }
        synchronized (this) {
            if (closed) {
                return false;
            }
            closeLocked();
            pending.clear();
            try {
                out.onError(Status.RESOURCE_EXHAUSTED
                        .withDescription("agent did not read its stream for too long; reconnect to resync")
                        .asRuntimeException());
            } catch (RuntimeException ignored) {
                // Already cancelled.
            }
        }
        metrics.streamCut();
        return true;
    }

    /** Ends the stream with {@code status} before anything was sent (caller holds the lock). */
    private void refuse(Status status) {
        log.warn("refused the Sync stream of node {}: {}", node, status.getDescription());
        closeLocked();
        try {
            out.onError(status.asRuntimeException());
        } catch (RuntimeException ignored) {
            // Already cancelled.
        }
    }

    /** The call ended (client cancel, disconnect, or server shutdown). */
    void close() {
        synchronized (this) {
            closeLocked();
        }
    }

    private void closeLocked() {
        if (!closed) {
            closed = true;
            pending.clear();
            int state = admissionState.getAndSet(DONE);
            if (state == HOLDING) {
                admission.release();
            } else if (state == WAITING) {
                admission.leave(this); // if already granted, admitted() sees DONE and passes it on
            }
            hub.unsubscribe(node, wakeUp);
            onClosed.run();
        }
    }

    boolean isClosed() {
        synchronized (this) {
            return closed;
        }
    }

    /** Messages queued but not yet handed to the transport (bounded by one diff). */
    int pendingMessages() {
        synchronized (this) {
            return pending.size();
        }
    }
}
