// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The upload's waiting events, one per key and generation ({@link VerdictFeed.Seen}): a verdict
 * whose key already waits is counted into that event instead of being explained and sent again.
 * The feed's thread adds and joins; the sending thread drains, which seals each event (later
 * verdicts of its key start a new one). Bounded: a full queue refuses new events.
 */
final class CoalescedEvents {
    private static final long SEALED = -1;

    private static final class Waiting {
        final VerdictFeed.Seen seen;
        final VerdictEvent event;
        final AtomicLong count = new AtomicLong(1);

        Waiting(VerdictFeed.Seen seen, VerdictEvent event) {
            this.seen = seen;
            this.event = event;
        }

        boolean join() {
            for (long c = count.get(); c != SEALED; c = count.get()) {
                if (count.compareAndSet(c, c + 1)) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Map<VerdictFeed.Seen, Waiting> open = new ConcurrentHashMap<>();
    private final BlockingQueue<Waiting> queue;

    CoalescedEvents(int capacity) {
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    /** Counts {@code seen} into its key's waiting event; false when none waits (or it was just sent). */
    boolean join(VerdictFeed.Seen seen) {
        Waiting w = open.get(seen);
        return w != null && w.join();
    }

    /** A new waiting event for {@code seen}'s key; false when the queue is full (nothing kept). */
    boolean add(VerdictFeed.Seen seen, VerdictEvent event) {
        Waiting w = new Waiting(seen, event);
        open.put(seen, w); // before it can be drained: a drained event is never left in the map
        if (!queue.offer(w)) {
            open.remove(seen, w);
            return false;
        }
        return true;
    }

    /** Up to {@code max} waiting events, oldest first, each with the count its key reached. */
    List<VerdictEvent> drain(int max) {
        List<Waiting> taken = new ArrayList<>(Math.min(max, queue.size()));
        queue.drainTo(taken, max);
        List<VerdictEvent> events = new ArrayList<>(taken.size());
        for (Waiting w : taken) {
            open.remove(w.seen, w);
            long n = w.count.getAndSet(SEALED);
            events.add(n == 1 ? w.event : w.event.toBuilder().setCount(n).build());
        }
        return events;
    }

    int size() {
        return queue.size();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    void clear() {
        queue.clear();
        open.clear();
    }
}
