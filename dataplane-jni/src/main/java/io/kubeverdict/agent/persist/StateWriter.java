// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PersistedNodeState;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the latest enforced state behind enforcement, on a thread of its own, so a slow or full
 * disk never delays a verdict or a change: {@link #offer} only leaves the state for the writer,
 * which writes the newest one at most every {@code minIntervalNanos} (states offered meanwhile are
 * skipped, the last is written). A failed write is logged when it starts failing and when it works
 * again, counted, and retried with the next state or after the interval; enforcement goes on from
 * memory. {@link #close} writes what is still pending, within a bound.
 */
public final class StateWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StateWriter.class);

    private record Pending(NodeSnapshot snapshot, long sequence) {}

    private final StateFile file;
    private final String node;
    private final String agentVersion;
    private final Clock clock;
    private final long minIntervalNanos;
    private final AtomicReference<Pending> pending = new AtomicReference<>();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean failing;
    private volatile boolean closed;
    private final Thread thread;

    public StateWriter(StateFile file, String node, String agentVersion, Clock clock, long minIntervalNanos) {
        this.file = file;
        this.node = node;
        this.agentVersion = agentVersion;
        this.clock = clock;
        this.minIntervalNanos = minIntervalNanos;
        this.thread = FatalThreads.worker("state-writer", this::run);
        thread.setDaemon(true);
    }

    public StateWriter start() {
        thread.start();
        return this;
    }

    /** The state now enforced; returns at once. */
    public void offer(NodeSnapshot snapshot, long sequence) {
        pending.set(new Pending(snapshot, sequence));
        LockSupport.unpark(thread);
    }

    /** States written so far. */
    public long written() {
        return written.get();
    }

    /** Writes that failed so far. */
    public long failed() {
        return failed.get();
    }

    /** Whether the last write failed (the file on disk is older than what is enforced). */
    public boolean failing() {
        return failing;
    }

    private void run() {
        while (!closed) {
            Pending next = pending.getAndSet(null);
            if (next == null) {
                LockSupport.park(this);
                continue;
            }
            if (!write(next)) {
                pending.compareAndSet(null, next); // retry unless a newer state came meanwhile
            }
            // An offer meanwhile only unparks early: the loop waits out the interval, the state stays pending.
            long deadline = System.nanoTime() + minIntervalNanos;
            while (!closed && System.nanoTime() < deadline) {
                LockSupport.parkNanos(this, deadline - System.nanoTime());
            }
        }
    }

    private boolean write(Pending state) {
        try {
            file.write(PersistedNodeState.newBuilder()
                    .setNode(node)
                    .setSequence(state.sequence())
                    .setWrittenUnixMillis(clock.millis())
                    .setAgentVersion(agentVersion)
                    .setSnapshot(state.snapshot())
                    .build());
            written.incrementAndGet();
            if (failing) {
                failing = false;
                log.info("state file {} written again (sequence {})", file.path(), state.sequence());
            }
            return true;
        } catch (Exception e) {
            failed.incrementAndGet();
            if (!failing) {
                failing = true;
                log.warn(
                        "could not write the state file {}: {}; enforcing from memory, a restart before it is "
                                + "written again starts from the older file",
                        file.path(),
                        e.toString());
            }
            return false;
        }
    }

    /** Stops the thread; the last state offered is written if the thread is not in the middle of a write. */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        LockSupport.unpark(thread);
        thread.join(TimeUnit.SECONDS.toMillis(5));
        Pending last = pending.getAndSet(null);
        if (last != null && !thread.isAlive()) {
            write(last);
        }
    }
}
