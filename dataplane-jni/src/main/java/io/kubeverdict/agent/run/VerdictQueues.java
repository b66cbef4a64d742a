// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.agent.verdict.VerdictLoop;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The verdict queues (--nfqueue-id .. +--queues-1) and their loops: waiting until all of them have
 * answered, and reading their kernel counters.
 */
final class VerdictQueues {
    private final int first;
    private final int count;
    private final List<VerdictLoop> loops = new ArrayList<>();

    VerdictQueues(int first, int count) {
        this.first = first;
        this.count = count;
    }

    int first() {
        return first;
    }

    int last() {
        return first + count - 1;
    }

    int[] ids() {
        int[] ids = new int[count];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = first + i;
        }
        return ids;
    }

    void add(VerdictLoop loop) {
        loops.add(loop);
    }

    List<VerdictLoop> loops() {
        return loops;
    }

    /** Every verdict thread has answered what it took before this call (see {@link VerdictLoop#awaitAnswered}). */
    boolean awaitAnswered(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        for (VerdictLoop loop : loops) {
            long left = Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            if (!loop.awaitAnswered(left)) {
                return false;
            }
        }
        return true;
    }

    /** All verdict queues' kernel counters added up (inspection); empty when none is bound. */
    Optional<QueueCounters> readTotals() {
        try {
            return QueueCounters.total(QueueCounters.read(QueueCounters.PROC_FILE, ids()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    static Optional<QueueCounters> read(int queueId) {
        try {
            return QueueCounters.read(QueueCounters.PROC_FILE, queueId);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
