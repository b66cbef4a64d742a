// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.observe;

import io.kubeverdict.proto.v1.VerdictEvent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;

/**
 * The most recent relayed verdict events (a fixed-size ring), for `observe --last/--since`. Each
 * is numbered in the order it was added, so an observer that replays them and then follows live
 * events can skip the live ones its replay already held. Holds only what agents uploaded: all of
 * it while the flow history is on, otherwise only while someone observed.
 */
final class RecentVerdicts {
    /** One held event: its number, when the relay got it (its clock, nanoseconds) and the event. */
    record Held(long seq, long receivedNanos, VerdictEvent event) {}

    /** A replay: the held events that matched, oldest first, and the number of the newest held event then. */
    record Replay(List<VerdictEvent> events, long upTo) {}

    private final Held[] ring;
    private long added; // events ever added; the next one's number is added + 1

    RecentVerdicts(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        ring = new Held[capacity];
    }

    /** Holds the event (forgetting the oldest when full) and returns its number. */
    synchronized long add(VerdictEvent event, long receivedNanos) {
        long seq = ++added;
        ring[(int) ((seq - 1) % ring.length)] = new Held(seq, receivedNanos, event);
        return seq;
    }

    synchronized int size() {
        return (int) Math.min(added, ring.length);
    }

    int capacity() {
        return ring.length;
    }

    /**
     * The newest at most {@code last} (0: any number) held events that match and were received at or
     * after {@code sinceNanos} (null: any time), oldest first.
     */
    synchronized Replay matching(Predicate<VerdictEvent> wanted, int last, Long sinceNanos) {
        int limit = last > 0 ? last : Integer.MAX_VALUE;
        List<VerdictEvent> newestFirst = new ArrayList<>();
        for (long seq = added; seq > added - size() && newestFirst.size() < limit; seq--) {
            Held h = ring[(int) ((seq - 1) % ring.length)];
            if (sinceNanos != null && h.receivedNanos() - sinceNanos < 0) {
                break; // older ones were received earlier still
            }
            if (wanted.test(h.event())) {
                newestFirst.add(h.event());
            }
        }
        Collections.reverse(newestFirst);
        return new Replay(newestFirst, added);
    }
}
