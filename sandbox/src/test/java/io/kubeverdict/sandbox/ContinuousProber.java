// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.ObservedMatrix;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.Testbed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * Probes every ordered pod pair on one TCP port, round after round on its own thread, and judges
 * each round against the {@link ExpectationTimeline} epochs it overlapped. A connection that
 * opened where no overlapped epoch allows it is a wrong verdict at once. A connection that did
 * not open where only "allowed" is accepted is probed again with longer timeouts (on a loaded
 * machine a verdict can come after the timeout) and is wrong if it still does not open.
 * TCP only: every probe is a new socket, so a new connection tracking entry that the agents judge
 * (a UDP probe could reuse the tuple of a recent flow that conntrack still holds).
 */
final class ContinuousProber implements AutoCloseable {
    record Wrong(double atSeconds, String pair, boolean connected, String epochs) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "at %.1fs %s %s, accepted: %s",
                    atSeconds,
                    pair,
                    connected ? "CONNECTED" : "did not connect (after retries)",
                    epochs);
        }
    }

    /** One round: when it ran and which pairs connected. */
    record Round(long startNanos, long endNanos, Set<String> connected) {}

    private final Testbed testbed;
    /**
     * A pair that did not open where only "allowed" is accepted is probed again with these
     * multiples of the timeout (some 10 s in all): an agent that has just started on a loaded
     * machine can take seconds to answer its first queued packets, which is slowness, not a verdict.
     */
    private static final int[] RETRY_TIMEOUT_FACTORS = {2, 3, 4};

    private final ServePort target;
    private final Duration timeout;
    private final ExpectationTimeline timeline;
    private final List<String> pods;
    private final long origin = System.nanoTime();
    private final Thread thread;
    private volatile boolean running = true;
    private final List<Wrong> wrong = new ArrayList<>();
    private final List<Round> rounds = new ArrayList<>();
    private final Map<Integer, Integer> wholeRoundsIn = new HashMap<>();
    private int retries;
    private Throwable failure;

    ContinuousProber(
            Testbed testbed, ServePort target, Duration timeout, ExpectationTimeline timeline, List<String> pods) {
        this.testbed = testbed;
        this.target = target;
        this.timeout = timeout;
        this.timeline = timeline;
        this.pods = List.copyOf(pods);
        this.thread = new Thread(this::run, "continuous-prober");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            while (running) {
                round();
            }
        } catch (Throwable t) {
            synchronized (this) {
                failure = t;
                notifyAll();
            }
        }
    }

    private void round() throws Exception {
        int first = timeline.current();
        long start = System.nanoTime();
        ObservedMatrix observed = testbed.probe(target, timeout);
        int last = timeline.current();
        Judgement judged = judge(timeline, first, last, pods, observed::connected);
        List<Wrong> found = new ArrayList<>();
        for (String[] pair : judged.opened()) {
            found.add(wrong(pair[0], pair[1], true, first, last));
        }
        List<String[]> late = judged.notOpened();
        int retried = 0;
        while (!late.isEmpty() && retried < RETRY_TIMEOUT_FACTORS.length) {
            ObservedMatrix again = testbed.probe(target, timeout.multipliedBy(RETRY_TIMEOUT_FACTORS[retried++]));
            int end = timeline.current();
            Judgement next = judge(timeline, first, end, pods, again::connected);
            for (String[] pair : next.opened()) {
                found.add(wrong(pair[0], pair[1], true, first, end));
            }
            List<String[]> stillLate = new ArrayList<>();
            for (String[] pair : next.notOpened()) {
                if (late.stream().anyMatch(l -> l[0].equals(pair[0]) && l[1].equals(pair[1]))) {
                    stillLate.add(pair);
                }
            }
            late = stillLate;
            last = end;
        }
        for (String[] pair : late) {
            found.add(wrong(pair[0], pair[1], false, first, last));
        }
        Set<String> connected = new HashSet<>();
        for (String from : pods) {
            for (String to : pods) {
                if (!from.equals(to) && observed.connected(from, to)) {
                    connected.add(Verdicts.pair(from, to));
                }
            }
        }
        synchronized (this) {
            wrong.addAll(found);
            if (retried > 0) {
                retries++;
            }
            rounds.add(new Round(start, System.nanoTime(), connected));
            if (first == last) {
                wholeRoundsIn.merge(first, 1, Integer::sum);
            }
            notifyAll();
        }
    }

    /**
     * What one observation shows against epochs first..last: the pairs that opened where nothing
     * accepts it, and those that did not open where only "allowed" is accepted.
     */
    record Judgement(List<String[]> opened, List<String[]> notOpened) {}

    static Judgement judge(
            ExpectationTimeline timeline,
            int first,
            int last,
            List<String> pods,
            BiPredicate<String, String> connected) {
        List<String[]> opened = new ArrayList<>();
        List<String[]> notOpened = new ArrayList<>();
        for (String from : pods) {
            for (String to : pods) {
                if (from.equals(to)) {
                    continue;
                }
                boolean c = connected.test(from, to);
                if (!timeline.accepted(first, last, from, to).contains(c)) {
                    (c ? opened : notOpened).add(new String[] {from, to});
                }
            }
        }
        return new Judgement(opened, notOpened);
    }

    private Wrong wrong(String from, String to, boolean connected, int first, int last) {
        return new Wrong(
                (System.nanoTime() - origin) / 1e9, Verdicts.pair(from, to), connected, timeline.labels(first, last));
    }

    /**
     * Waits until n rounds ran entirely inside epoch (so that epoch's expectation was really
     * checked on packets); throws when the prober failed or after timeout.
     */
    synchronized void awaitWholeRounds(int epoch, int n, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (wholeRoundsIn.getOrDefault(epoch, 0) < n) {
            if (failure != null) {
                throw new IllegalStateException("the prober failed", failure);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(
                        "only " + wholeRoundsIn.getOrDefault(epoch, 0) + " of " + n + " probe rounds ran inside epoch "
                                + timeline.epoch(epoch).label() + " within " + within);
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    synchronized int wholeRoundsIn(int epoch) {
        return wholeRoundsIn.getOrDefault(epoch, 0);
    }

    /** The end of the first round that started at or after sinceNanos and saw exactly v; -1 if none yet. */
    synchronized long firstExactRoundEnd(Verdicts v, long sinceNanos) {
        for (Round r : rounds) {
            if (r.startNanos() >= sinceNanos && r.connected().equals(v.allowed())) {
                return r.endNanos();
            }
        }
        return -1;
    }

    synchronized List<Wrong> wrongVerdicts() {
        return List.copyOf(wrong);
    }

    synchronized int rounds() {
        return rounds.size();
    }

    synchronized int retries() {
        return retries;
    }

    /** Stops after the round in flight; rethrows what made the prober fail. */
    @Override
    public void close() throws Exception {
        running = false;
        thread.join(timeout.multipliedBy(4).toMillis() + 10_000);
        synchronized (this) {
            if (failure != null) {
                throw new IllegalStateException("the prober failed", failure);
            }
        }
    }
}
