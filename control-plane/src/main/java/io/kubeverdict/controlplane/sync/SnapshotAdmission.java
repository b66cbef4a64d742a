// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Bounds how many Sync streams build and send a full snapshot at once. A returning fleet (every
 * agent reconnecting after a control-plane restart) would otherwise interleave a thousand full
 * snapshots: every agent would finish near the end, and every stream's transport buffers would
 * fill at the same time. Streams beyond the limit wait in line, open and idle, and are admitted in
 * arrival order as earlier ones hand over their InSync. Deltas need no permit.
 */
final class SnapshotAdmission {
    /** Someone waiting in line; told once when it holds a permit. */
    interface Waiter {
        void admitted();
    }

    private final int permits;
    private final LinkedHashSet<Waiter> line = new LinkedHashSet<>(); // arrival order
    private int inUse;

    SnapshotAdmission(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("need at least one permit, got " + permits);
        }
        this.permits = permits;
    }

    /** A permit now (true), or a place in line (false; {@link Waiter#admitted} follows later). */
    synchronized boolean admitOrQueue(Waiter w) {
        if (inUse < permits) {
            inUse++;
            return true;
        }
        line.add(w);
        return false;
    }

    /** Gives a held permit back; the first in line gets it. */
    void release() {
        Waiter next;
        synchronized (this) {
            Iterator<Waiter> first = line.iterator();
            if (!first.hasNext()) {
                inUse--;
                return;
            }
            next = first.next();
            first.remove();
        }
        next.admitted(); // the permit passes on; outside the lock: the waiter may do anything
    }

    /** A waiter that leaves the line (its stream ended); true if it was still waiting. */
    synchronized boolean leave(Waiter w) {
        return line.remove(w);
    }

    synchronized int waiting() {
        return line.size();
    }

    synchronized int inUse() {
        return inUse;
    }

    int permits() {
        return permits;
    }
}
