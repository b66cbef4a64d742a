// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.conntrack.AffectedEndpoints.Target;
import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.runtime.FatalThreads;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes established connections follow the policy: after each applied generation, the connections
 * of the endpoints whose verdicts can have changed ({@link AffectedEndpoints}) are dumped from
 * conntrack with filters the kernel applies, each is judged again by the generation's verdict
 * function on its original tuple, exactly as its first packet would be judged now, and the denied
 * ones are marked {@link FlowMarks#CUT}, which the ruleset drops (or resets) in the kernel.
 *
 * <p>Runs on its own thread: {@link #changed} (sync thread) only works out the affected endpoints
 * and queues them; a burst of generations is judged once, by the newest. Before dumping, it waits
 * until the verdict loop has answered every batch it took under an older generation, so a
 * connection such a batch admitted is in the table (and is judged) by then.
 *
 * <p>Which connections: those marked {@link FlowMarks#ADMITTED} from or to the endpoint's
 * addresses (what our queue let through); for endpoints that may have connections no verdict saw
 * (newly selected, new, on the agent's start or a resync) every connection from or to its
 * addresses, except those opened by the node itself (the data plane never judges those). IPv4:
 * up to {@value RejudgePass#MAX_ADDRESS_DUMPS} such per-address dumps the kernel filters; beyond, one dump
 * filtered by mark alone, matched against the addresses here. IPv6: always that one dump per
 * pass, because the kernel's IPv6 address filter is inverted (kv_conntrack.c) and the shim would
 * parse every IPv6 entry of the mark once per address instead of once. Connections already cut,
 * and TCP connections already closed, are skipped. Dumps stream through a buffer of fixed size
 * ({@link TableDumps}), so memory does not grow with the node's conntrack table; the time of a
 * dump by mark alone does (the kernel has no index by address).
 *
 * <p>Faults never stop it: a failed dump is retried (ENOBUFS or an interrupted dump at once, up to
 * {@value TableDumps#DUMP_ATTEMPTS} times), and an endpoint whose connections could not all be judged stays
 * pending (counted) and is retried with backoff; a connection that vanished before its cut is
 * counted. Allowed connections without ADMITTED get it, so later changes find them by mark.
 */
public final class ConntrackRejudger implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConntrackRejudger.class);
    private static final long RETRY_FIRST_MILLIS = 200;
    private static final long RETRY_MAX_MILLIS = 5000;
    private static final long IN_FLIGHT_TIMEOUT_MILLIS = 1000;

    /** Waits until verdicts decided before the call have reached the kernel. */
    @FunctionalInterface
    public interface VerdictsInFlight {
        boolean awaitAnswered(long timeoutMillis) throws InterruptedException;

        VerdictsInFlight NONE = timeout -> true;
    }

    private final LocalAddresses localAddresses;
    private final VerdictsInFlight inFlight;
    private final CutSink sink;
    private final RejudgeObserver observer;
    private final LongSupplier nanoTime;
    private final Object lock = new Object();
    private final Map<EndpointId, PendingEndpoint> pending = new LinkedHashMap<>();
    private EnforcedState latest;
    private LearnedAddresses latestLearned =
            LearnedAddresses.NONE; // the addresses pods learned from DNS, as latest numbers them
    private long changes; // generations handed to changed()
    private long judgedUpTo; // every connection affected by the first judgedUpTo of them is judged
    private boolean behind; // some change is not judged yet, the oldest applied at behindSince
    private volatile boolean running = true;
    private final Thread thread;

    private final TableDumps dumps; // worker thread only

    /**
     * @param opener opens the conntrack table; called on the re-judging thread (the process's
     *     network namespace), again after a failure that may have broken the socket
     */
    public ConntrackRejudger(
            Supplier<ConntrackTable> opener,
            LocalAddresses localAddresses,
            VerdictsInFlight inFlight,
            CutSink sink,
            RejudgeObserver observer,
            LongSupplier nanoTime) {
        this.dumps = new TableDumps(opener, observer);
        this.localAddresses = localAddresses;
        this.inFlight = inFlight;
        this.sink = sink;
        this.observer = observer;
        this.nanoTime = nanoTime;
        this.thread = FatalThreads.worker("kv-conntrack", this::run);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * A new generation is enforced (sync thread; cheap). {@code everything}: judge the connections
     * of every selected endpoint (the agent's first state, or the first of a new stream).
     */
    public void changed(EnforcedState before, EnforcedState now, boolean everything) {
        changed(before, now, everything, LearnedAddresses.NONE);
    }

    /** As above, domain-name peers judged with {@code learned} (the view that numbers {@code now}'s index). */
    public void changed(EnforcedState before, EnforcedState now, boolean everything, LearnedAddresses learned) {
        List<Target> targets = everything || before == null
                ? AffectedEndpoints.all(now.snapshot())
                : AffectedEndpoints.between(before.snapshot(), now.snapshot());
        long since = nanoTime.getAsLong();
        synchronized (lock) {
            latest = now;
            latestLearned = learned;
            changes++;
            for (Target t : targets) {
                pending.merge(t.id(), new PendingEndpoint(t, since), PendingEndpoint::merge);
            }
            if (!behind) {
                behind = true;
                observer.behindSince(since);
            }
            observer.pending(pending.size());
            lock.notifyAll();
        }
    }

    /**
     * Waits until the connections affected by every generation handed over before this call are
     * judged (each pass that covered them complete, none left to retry); false on timeout.
     */
    public boolean awaitJudged(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        synchronized (lock) {
            long target = changes;
            while (judgedUpTo < target) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                lock.wait(left);
            }
            return true;
        }
    }

    /** After a pass (under the lock): caught up, or behind since the oldest endpoint still waiting. */
    private void reportBehind() {
        if (judgedUpTo == changes) {
            behind = false;
            observer.caughtUp();
        } else if (!pending.isEmpty()) {
            long oldest = Long.MAX_VALUE;
            for (PendingEndpoint p : pending.values()) {
                oldest = Math.min(oldest, p.sinceNanos());
            }
            observer.behindSince(oldest);
        } // else only changes that affected no endpoint are left: the next (empty) pass catches up
    }

    private void run() {
        long retryMillis = RETRY_FIRST_MILLIS;
        while (running) {
            Map<EndpointId, PendingEndpoint> batch;
            EnforcedState state;
            LearnedAddresses learned;
            long covers;
            try {
                synchronized (lock) {
                    while (running && pending.isEmpty() && judgedUpTo == changes) {
                        lock.wait();
                    }
                    if (!running) {
                        return;
                    }
                    batch = new LinkedHashMap<>(pending);
                    pending.clear();
                    state = latest;
                    learned = latestLearned;
                    covers = changes;
                }
                if (!inFlight.awaitAnswered(IN_FLIGHT_TIMEOUT_MILLIS)) {
                    log.warn(
                            "the verdict loop did not answer its batch within {} ms; judging connections anyway",
                            IN_FLIGHT_TIMEOUT_MILLIS);
                }
            } catch (InterruptedException e) {
                return;
            }
            Map<EndpointId, PendingEndpoint> failed;
            long start = nanoTime.getAsLong();
            try {
                failed = new RejudgePass(dumps, localAddresses, sink, observer, nanoTime, state, learned)
                        .run(batch.values());
            } catch (RuntimeException e) {
                log.warn("judging established connections failed; retrying", e);
                failed = batch;
                dumps.reopen();
            }
            observer.passFinished(nanoTime.getAsLong() - start, failed.isEmpty());
            synchronized (lock) {
                for (Map.Entry<EndpointId, PendingEndpoint> f : failed.entrySet()) {
                    pending.merge(f.getKey(), f.getValue(), PendingEndpoint::merge);
                }
                if (failed.isEmpty() && pending.isEmpty()) {
                    judgedUpTo = Math.max(judgedUpTo, covers);
                }
                reportBehind();
                observer.pending(pending.size());
                lock.notifyAll();
                if (!failed.isEmpty()) {
                    try {
                        lock.wait(retryMillis); // a new change wakes it early, and is merged in
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
            retryMillis = failed.isEmpty() ? RETRY_FIRST_MILLIS : Math.min(RETRY_MAX_MILLIS, retryMillis * 2);
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            running = false;
            lock.notifyAll();
        }
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive()) {
            dumps.close();
        }
    }
}
