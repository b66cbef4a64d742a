// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.proto.v1.AppliedAck;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the control plane what the kernel enforces, via ReportApplied. At most one report is in
 * flight; sequences applied meanwhile collapse into the newest, so a slow control plane never
 * makes the sync thread wait or reports pile up.
 *
 * <p>While nothing is applied for a heartbeat interval, it sends a heartbeat instead (a report
 * with {@code heartbeat} set and no sequence), so the control plane's last contact of an idle
 * node stays recent and a silent agent stands out in {@code kube-verdict status}. A heartbeat
 * claims nothing applied: a sequence of an earlier stream must never count for a newer one.
 */
public final class AppliedReporter implements AppliedListener, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AppliedReporter.class);

    /** How long an idle agent stays silent before it sends a heartbeat. */
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofSeconds(20);

    /** Marks a pending heartbeat (sequences are never negative). */
    private static final long HEARTBEAT = -2;

    private final Channel channel;
    private final PolicySyncGrpc.PolicySyncStub stub;
    private final String node;
    private final String agentVersion;
    private final long heartbeatNanos;
    private final ScheduledExecutorService timer;
    private boolean inFlight;
    private long pending = -1;
    private long lastSentNanos = System.nanoTime();

    public AppliedReporter(Channel channel, String node, String agentVersion) {
        this(channel, node, agentVersion, DEFAULT_HEARTBEAT);
    }

    public AppliedReporter(Channel channel, String node, String agentVersion, Duration heartbeat) {
        if (heartbeat.isNegative() || heartbeat.isZero()) {
            throw new IllegalArgumentException("heartbeat interval must be > 0, got " + heartbeat);
        }
        this.channel = channel;
        this.stub = PolicySyncGrpc.newStub(channel);
        this.node = node;
        this.agentVersion = agentVersion;
        this.heartbeatNanos = heartbeat.toNanos();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "kv-heartbeat");
            t.setDaemon(true);
            return t;
        });
        // Checked twice per interval: an idle agent is heard from at least every 1.5 intervals.
        long tick = Math.max(1, heartbeatNanos / 2);
        timer.scheduleWithFixedDelay(FatalThreads.guard(this::heartbeatIfIdle), tick, tick, TimeUnit.NANOSECONDS);
    }

    @Override
    public void applied(long sequence, long eventTimeUnixNanos) {
        offer(sequence);
    }

    /**
     * Sends a heartbeat when no report has started for an interval and none is in flight; stops
     * the heartbeats once the channel is shut down (the agent's shutdown closes only the channel).
     */
    void heartbeatIfIdle() {
        if (channel instanceof ManagedChannel m && m.isShutdown()) {
            close();
            return;
        }
        synchronized (this) {
            if (inFlight || System.nanoTime() - lastSentNanos < heartbeatNanos) {
                return;
            }
        }
        offer(HEARTBEAT);
    }

    private void offer(long sequence) {
        long toSend;
        synchronized (this) {
            // A real sequence wins over a waiting heartbeat; a heartbeat never replaces a sequence.
            if (sequence != HEARTBEAT || pending < 0) {
                pending = sequence;
            }
            if (inFlight) {
                return;
            }
            inFlight = true;
            toSend = pending;
            pending = -1;
            lastSentNanos = System.nanoTime();
        }
        send(toSend);
    }

    private void send(long sequence) {
        boolean heartbeat = sequence == HEARTBEAT;
        AppliedReport report = AppliedReport.newBuilder()
                .setNode(node)
                .setAppliedSequence(heartbeat ? 0 : sequence)
                .setAgentVersion(agentVersion)
                .setHeartbeat(heartbeat)
                .build();
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).reportApplied(report, new StreamObserver<>() {
            @Override
            public void onNext(AppliedAck ack) {}

            @Override
            public void onError(Throwable t) {
                String what = heartbeat ? "heartbeat" : "ReportApplied(" + sequence + ")";
                if (!heartbeat && SyncClient.refusal(t) != null) {
                    // Refused for this node (identity, wrong node): nothing retries it by itself.
                    log.warn("the control plane REFUSED {} of node {}: {}", what, node, t.toString());
                } else {
                    // A heartbeat without a stream (FAILED_PRECONDITION) or a refusal: the sync
                    // stream's own retries say so loudly.
                    log.debug("{} failed: {}", what, t.toString());
                }
                done();
            }

            @Override
            public void onCompleted() {
                done();
            }
        });
    }

    private void done() {
        long next;
        synchronized (this) {
            if (pending == -1) {
                inFlight = false;
                return;
            }
            next = pending;
            pending = -1;
            lastSentNanos = System.nanoTime();
        }
        send(next);
    }

    /** Whether heartbeats are still scheduled. */
    boolean beating() {
        return !timer.isShutdown();
    }

    /** Stops the heartbeats (reports already in flight finish or fail with the channel). */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
