// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.proto.v1.ObservedVerdict;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Verdicts of several agents in the order they were decided: each agent uploads on its own
 * schedule, so an event is held for a moment after it arrives and leaves in the order of the
 * agents' timestamps (a later event that arrived earlier waits for an earlier one).
 */
final class TimeOrder {
    private record Held(long decidedNanos, long arrivedNanos, long sequence, ObservedVerdict verdict) {}

    private final long holdNanos;
    private long sequence;
    private final PriorityQueue<Held> held =
            new PriorityQueue<>(Comparator.comparingLong(Held::decidedNanos).thenComparingLong(Held::sequence));

    TimeOrder(long holdNanos) {
        this.holdNanos = holdNanos;
    }

    void add(ObservedVerdict v, long nowNanos) {
        var t = v.getEvent().getTime();
        held.add(new Held(t.getSeconds() * 1_000_000_000L + t.getNanos(), nowNanos, sequence++, v));
    }

    /** How long until the next event may leave (Long.MAX_VALUE when none is held). */
    long nanosUntilNext(long nowNanos) {
        Held first = held.peek();
        return first == null ? Long.MAX_VALUE : Math.max(0, first.arrivedNanos() + holdNanos - nowNanos);
    }

    /** The events whose turn has come, in the order they were decided. */
    List<ObservedVerdict> due(long nowNanos) {
        List<ObservedVerdict> out = new ArrayList<>();
        while (!held.isEmpty() && held.peek().arrivedNanos() + holdNanos <= nowNanos) {
            out.add(held.poll().verdict());
        }
        return out;
    }

    /** Every held event, in the order they were decided (the stream ends). */
    List<ObservedVerdict> drain() {
        List<ObservedVerdict> out = new ArrayList<>();
        while (!held.isEmpty()) {
            out.add(held.poll().verdict());
        }
        return out;
    }
}
