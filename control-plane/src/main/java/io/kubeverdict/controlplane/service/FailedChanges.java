// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Changes that threw when applied, each waiting for its retry (event thread only). Upserts and
 * deletes state an object's whole new state, so applying one again is safe, and a newer change of
 * the same object makes an older one's retry moot ({@link #supersede}). Backoff doubles from 1 s
 * to 60 s.
 */
final class FailedChanges {
    private static final Logger log = LoggerFactory.getLogger(FailedChanges.class);
    private static final long FIRST_BACKOFF_NANOS = 1_000_000_000L;
    private static final long MAX_BACKOFF_NANOS = 60_000_000_000L;

    /** A change as queued: {@code object} names what it is about, or is null (retried on its own). */
    record Change(String kind, String object, Consumer<PolicyCalculator> change) {}

    /** A failed change, how often it failed, and when it is due again (System.nanoTime). */
    record Waiting(Change change, int failures, long dueNanos) {}

    private final Map<Object, Waiting> waiting = new LinkedHashMap<>();

    static long backoffNanos(int failures) {
        return Math.min(FIRST_BACKOFF_NANOS << Math.min(Math.max(failures, 1) - 1, 6), MAX_BACKOFF_NANOS);
    }

    /** {@code c} threw {@code e}, its {@code failures}th time: retried after a backoff that grows with them. */
    void failed(Change c, int failures, RuntimeException e, long now) {
        long backoff = backoffNanos(failures);
        waiting.put(c.object() != null ? c.object() : c, new Waiting(c, failures, now + backoff));
        if (Long.bitCount(failures) == 1) { // the 1st, 2nd, 4th, 8th... failure: no flood
            log.error(
                    "event {} of {} failed (attempt {}); it is left out of the calculation until a retry succeeds "
                            + "(next in {} ms)",
                    c.kind(),
                    c.object() != null ? c.object() : "several objects",
                    failures,
                    backoff / 1_000_000,
                    e);
        }
    }

    /** A newer change of {@code object} arrived: the older failed change is not retried. */
    boolean supersede(String object) {
        return waiting.remove(object) != null;
    }

    /** The changes due at {@code now}, removed (one that fails again comes back through {@link #failed}). */
    List<Waiting> takeDue(long now) {
        List<Waiting> due = new ArrayList<>();
        for (Iterator<Waiting> it = waiting.values().iterator(); it.hasNext(); ) {
            Waiting w = it.next();
            if (now - w.dueNanos() >= 0) {
                due.add(w);
                it.remove();
            }
        }
        return due;
    }

    /** Nanos from {@code now} until the earliest retry (0 if due), or -1 when nothing waits. */
    long nanosUntilNext(long now) {
        long next = -1;
        for (Waiting w : waiting.values()) {
            long left = Math.max(0, w.dueNanos() - now);
            next = next < 0 ? left : Math.min(next, left);
        }
        return next;
    }

    int size() {
        return waiting.size();
    }

    boolean isEmpty() {
        return waiting.isEmpty();
    }
}
