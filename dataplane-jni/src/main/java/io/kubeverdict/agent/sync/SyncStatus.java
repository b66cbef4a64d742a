// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the sync client is doing, for inspection, health and metrics. Written by the sync thread,
 * read by anyone.
 */
public final class SyncStatus {
    private volatile boolean connected;
    private volatile boolean inSync;
    private volatile boolean everApplied;
    private volatile long appliedSequence;
    private volatile long receivedSequence;
    private volatile long lastMessageNanos;
    private volatile long lastAppliedEventTimeNanos;
    private final AtomicLong reconnects = new AtomicLong();
    private final AtomicLong resyncs = new AtomicLong();
    private final AtomicLong applyFailures = new AtomicLong();
    private final AtomicLong messages = new AtomicLong();

    /** Whether a stream to the control plane is open. */
    public boolean connected() {
        return connected;
    }

    /** Whether the current stream has passed InSync and its state is applied. */
    public boolean inSync() {
        return inSync;
    }

    /** Whether any in-sync state was ever applied: the kernel is programmed and enforcing. */
    public boolean everApplied() {
        return everApplied;
    }

    public long appliedSequence() {
        return appliedSequence;
    }

    public long receivedSequence() {
        return receivedSequence;
    }

    /** System.nanoTime() of the last message received; 0 before any. */
    public long lastMessageNanos() {
        return lastMessageNanos;
    }

    /** The control plane's event time of the newest applied change (unix nanos); 0 if unknown. */
    public long lastAppliedEventTimeNanos() {
        return lastAppliedEventTimeNanos;
    }

    public long reconnects() {
        return reconnects.get();
    }

    /** Streams abandoned because of a sequence gap or a message that did not fit. */
    public long resyncs() {
        return resyncs.get();
    }

    public long applyFailures() {
        return applyFailures.get();
    }

    public long messages() {
        return messages.get();
    }

    void connected(boolean value) {
        connected = value;
        if (!value) {
            inSync = false;
        }
    }

    void received(long sequence, long nanoTime) {
        receivedSequence = sequence;
        lastMessageNanos = nanoTime;
        messages.incrementAndGet();
    }

    void applied(long sequence, long eventTimeNanos) {
        appliedSequence = sequence;
        if (eventTimeNanos != 0) {
            lastAppliedEventTimeNanos = eventTimeNanos;
        }
        inSync = true;
        everApplied = true;
    }

    void reconnecting() {
        reconnects.incrementAndGet();
    }

    void resync() {
        resyncs.incrementAndGet();
    }

    void applyFailed() {
        applyFailures.incrementAndGet();
    }
}
