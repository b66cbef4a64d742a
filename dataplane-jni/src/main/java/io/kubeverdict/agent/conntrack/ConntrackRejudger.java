// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.agent.conntrack.AffectedEndpoints.Target;
import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.ConntrackQuery.Match;
import io.kubeverdict.jni.Errno;
import io.kubeverdict.jni.NativeException;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.LearnedAddresses;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
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
 * up to {@value #MAX_ADDRESS_DUMPS} such per-address dumps the kernel filters; beyond, one dump
 * filtered by mark alone, matched against the addresses here. IPv6: always that one dump per
 * pass, because the kernel's IPv6 address filter is inverted (kv_conntrack.c) and the shim would
 * parse every IPv6 entry of the mark once per address instead of once. Connections already cut,
 * and TCP connections already closed, are skipped.
 *
 * <p>Faults never stop it: a failed dump is retried (ENOBUFS or an interrupted dump at once, up to
 * {@value #DUMP_ATTEMPTS} times), and an endpoint whose connections could not all be judged stays
 * pending (counted) and is retried with backoff; a connection that vanished before its cut is
 * counted. Allowed connections without ADMITTED get it, so later changes find them by mark.
 */
public final class ConntrackRejudger implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConntrackRejudger.class);
    /** Per-address dumps (2 per address) a pass may make before it dumps by mark alone. */
    static final int MAX_ADDRESS_DUMPS = 32;

    static final int DUMP_ATTEMPTS = 3;
    /** Entries a dump delivers to the agent at a time. */
    static final int CHUNK_ENTRIES = 1024;

    private static final long RETRY_FIRST_MILLIS = 200;
    private static final long RETRY_MAX_MILLIS = 5000;
    private static final long IN_FLIGHT_TIMEOUT_MILLIS = 1000;
    private static final int TCP_TIME_WAIT = 7;
    private static final int TCP_CLOSE = 8;

    /** Waits until verdicts decided before the call have reached the kernel. */
    @FunctionalInterface
    public interface VerdictsInFlight {
        boolean awaitAnswered(long timeoutMillis) throws InterruptedException;

        VerdictsInFlight NONE = timeout -> true;
    }

    private final Supplier<ConntrackTable> opener;
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
    private volatile boolean running = true;
    private final Thread thread;

    // worker thread only
    private ConntrackTable table;
    private final ConntrackEntries entries = new ConntrackEntries(CHUNK_ENTRIES);
    private final PacketTuple tuple = new PacketTuple();

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
        this.opener = opener;
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
                failed = pass(batch, state, learned);
            } catch (RuntimeException e) {
                log.warn("judging established connections failed; retrying", e);
                failed = batch;
                reopen();
            }
            observer.passFinished(nanoTime.getAsLong() - start, failed.isEmpty());
            synchronized (lock) {
                for (Map.Entry<EndpointId, PendingEndpoint> f : failed.entrySet()) {
                    pending.merge(f.getKey(), f.getValue(), PendingEndpoint::merge);
                }
                if (failed.isEmpty() && pending.isEmpty()) {
                    judgedUpTo = Math.max(judgedUpTo, covers);
                }
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

    /** One pass over a batch of endpoints, judged by {@code state}; returns those to retry. */
    private Map<EndpointId, PendingEndpoint> pass(
            Map<EndpointId, PendingEndpoint> batch, EnforcedState state, LearnedAddresses learned) {
        if (table == null) {
            table = opener.get();
        }
        Pass pass = new Pass(state, learned);
        FamilyTargets v4 = FamilyTargets.of(IpAddress.V4, batch.values());
        FamilyTargets v6 = FamilyTargets.of(IpAddress.V6, batch.values());
        if (2 * v4.size() <= MAX_ADDRESS_DUMPS) {
            addressDumps(v4, pass);
        } else {
            familyDump(v4, pass);
        }
        if (v6.size() > 0) {
            familyDump(v6, pass); // the kernel cannot filter IPv6 addresses (see class doc)
        }
        if (pass.cut > 0 || !pass.failed.isEmpty()) {
            log.info(
                    "sequence {}: judged {} established connections of {} endpoints again, cut {}{}{}",
                    state.sequence(),
                    pass.examined,
                    batch.size(),
                    pass.cut,
                    pass.vanished > 0 ? ", " + pass.vanished + " gone before their cut" : "",
                    pass.failed.isEmpty() ? "" : "; " + pass.failed.size() + " endpoints to retry");
        } else {
            log.debug(
                    "sequence {}: judged {} established connections of {} endpoints again, none cut",
                    state.sequence(),
                    pass.examined,
                    batch.size());
        }
        return pass.failed;
    }

    /**
     * Two dumps per IPv4 address, numbered 2k (opened from address k) and 2k + 1 (opened to it). A
     * connection between two of the addresses (or from one to itself) is in two dumps; it is judged
     * in the first, decided from its tuple and mark rather than remembered, so memory does not grow
     * with the connections and two entries with the same (hashed, 32-bit) conntrack id stay apart.
     */
    private void addressDumps(FamilyTargets targets, Pass pass) {
        for (int k = 0; k < targets.size(); k++) {
            for (Match match : List.of(Match.ORIGINAL_SOURCE, Match.REPLY_SOURCE)) {
                int position = 2 * k + (match == Match.ORIGINAL_SOURCE ? 0 : 1);
                ConntrackQuery q = targets.unjudged(k)
                        ? ConntrackQuery.of(targets.address(k), match, 0, FlowMarks.CUT)
                        : ConntrackQuery.of(targets.address(k), match, FlowMarks.ADMITTED, FlowMarks.OURS);
                int at = k;
                boolean done = dump(q, chunk -> {
                    for (int i = 0; i < chunk.size(); i++) {
                        if (!inEarlierDump(targets, i, position)) {
                            pass.judge(i, targets, at);
                        }
                    }
                });
                if (!done) {
                    pass.failed(targets, k);
                }
            }
        }
    }

    /**
     * Whether an earlier dump of the pass delivered entry i too. Its mark then is taken to be its
     * mark now: marks only gain bits (a cut entry leaves every later dump), and one that gained
     * ADMITTED since was admitted by a verdict of this generation or a newer one.
     */
    private boolean inEarlierDump(FamilyTargets targets, int i, int position) {
        int mark = entries.mark(i);
        int from = targets.indexOf(entries.originalSourceWord(i, 0), entries.originalSourceWord(i, 1));
        if (from >= 0 && 2 * from < position && targets.wants(from, mark)) {
            return true;
        }
        int to = targets.indexOf(entries.replySourceWord(i, 0), entries.replySourceWord(i, 1));
        return to >= 0 && 2 * to + 1 < position && targets.wants(to, mark);
    }

    /** One dump of a family, filtered by mark in the kernel, matched against the batch's addresses here. */
    private void familyDump(FamilyTargets targets, Pass pass) {
        ConntrackQuery q = targets.anyUnjudged()
                ? ConntrackQuery.marked(targets.family(), 0, FlowMarks.CUT)
                : ConntrackQuery.marked(targets.family(), FlowMarks.ADMITTED, FlowMarks.OURS);
        boolean done = dump(q, chunk -> {
            for (int i = 0; i < chunk.size(); i++) {
                int mark = chunk.mark(i);
                int k = targets.indexOf(chunk.originalSourceWord(i, 0), chunk.originalSourceWord(i, 1));
                if (!targets.wants(k, mark)) {
                    k = targets.indexOf(chunk.replySourceWord(i, 0), chunk.replySourceWord(i, 1));
                }
                if (targets.wants(k, mark)) {
                    pass.judge(i, targets, k);
                }
            }
        });
        if (!done) {
            for (int k = 0; k < targets.size(); k++) {
                pass.failed(targets, k);
            }
        }
    }

    /**
     * Streams a dump through {@link #entries} to {@code chunks} (never more than a chunk of entries
     * at once, whatever the table's size); dumps again when part of it was lost (what was judged
     * is judged again). False (counted) when it could not be done.
     */
    private boolean dump(ConntrackQuery q, Conntrack.Chunks chunks) {
        for (int attempt = 1; ; attempt++) {
            try {
                observer.dumped(table.dump(q, entries, chunks));
                return true;
            } catch (NativeException e) {
                observer.dumpFailed(e.errno());
                boolean transient_ = e.errno() == Errno.ENOBUFS || e.errno() == Errno.EINTR;
                if (!transient_ || attempt == DUMP_ATTEMPTS) {
                    log.warn("conntrack dump {} failed (attempt {}): {}", q, attempt, e.getMessage());
                    if (!transient_) {
                        reopen();
                    }
                    return false;
                }
            }
        }
    }

    private void reopen() {
        if (table != null) {
            try {
                table.close();
            } catch (RuntimeException ignored) {
                // it was broken anyway
            }
            table = null;
        }
        try {
            table = opener.get();
        } catch (RuntimeException e) {
            log.warn("cannot reopen conntrack: {}", e.toString());
        }
    }

    /** The work of one pass: what was judged and cut. */
    private final class Pass {
        final EnforcedState state;
        final SnapshotIndex index;
        final LearnedAddresses learned;
        final Map<EndpointId, PendingEndpoint> failed = new LinkedHashMap<>();
        AddressIndex local;
        int examined;
        int cut;
        int vanished;

        Pass(EnforcedState state, LearnedAddresses learned) {
            this.state = state;
            this.index = state.index();
            this.learned = learned;
        }

        /** Address k's endpoints are retried. */
        void failed(FamilyTargets targets, int k) {
            for (PendingEndpoint p : targets.owners(k)) {
                failed.put(p.target().id(), p);
            }
        }

        /** Judges entry i, a connection from or to address k of {@code targets}. */
        void judge(int i, FamilyTargets targets, int k) {
            int mark = entries.mark(i);
            if ((mark & FlowMarks.CUT) != 0) {
                return;
            }
            int tcp = entries.tcpState(i);
            if (tcp == TCP_TIME_WAIT || tcp == TCP_CLOSE) {
                return; // over already; a new connection with this tuple gets a new entry
            }
            boolean admitted = (mark & FlowMarks.ADMITTED) != 0;
            if (!admitted && openedByTheNode(i)) {
                return; // the data plane never judges those
            }
            fill(i);
            int code = index.decide(tuple, learned);
            examined++;
            observer.examined();
            try {
                if (Decision.allowed(code)) {
                    if (!admitted) {
                        table.setMark(entries, i, FlowMarks.ADMITTED, FlowMarks.ADMITTED);
                    }
                    return;
                }
                if (table.setMark(entries, i, FlowMarks.CUT, FlowMarks.OURS)) {
                    cut++;
                    observer.cut(entries.protocol(i), nanoTime.getAsLong() - targets.sinceNanos(k));
                    sink.cut(
                            tuple, entries.hasPorts(i) ? entries.originalSourcePort(i) : 0, entries.id(i), code, state);
                } else {
                    vanished++;
                    observer.vanished();
                }
            } catch (NativeException e) {
                observer.cutFailed(e.errno());
                failed(targets, k);
                log.warn("could not mark {}: {}", entries.describe(i), e.getMessage());
            }
        }

        private boolean openedByTheNode(int i) {
            if (local == null) {
                local = AddressIndex.of(localAddresses.get());
            }
            return local.indexOf(entries.family(i), entries.originalSourceWord(i, 0), entries.originalSourceWord(i, 1))
                    >= 0;
        }

        /** The connection as its first packet was judged: opener -> answerer (after DNAT), its port. */
        private void fill(int i) {
            tuple.family = entries.family(i);
            tuple.srcHi = entries.originalSourceWord(i, 0);
            tuple.srcLo = entries.originalSourceWord(i, 1);
            tuple.dstHi = entries.replySourceWord(i, 0);
            tuple.dstLo = entries.replySourceWord(i, 1);
            tuple.protocol = entries.protocol(i);
            tuple.dstPort = entries.hasPorts(i) ? entries.replySourcePort(i) : 0;
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
        if (!thread.isAlive() && table != null) {
            table.close();
            table = null;
        }
    }
}
