// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import java.util.Arrays;

/** The most recent latency samples of one node (a fixed ring), for its p50/p99 in ListNodes. */
final class LatencyWindow {
    private final long[] samples;
    private int next;
    private int size;

    LatencyWindow(int capacity) {
        samples = new long[capacity];
    }

    synchronized void add(long nanos) {
        samples[next] = Math.max(0, nanos);
        next = (next + 1) % samples.length;
        size = Math.min(size + 1, samples.length);
    }

    synchronized int size() {
        return size;
    }

    /** The nearest-rank quantile (0 < q <= 1) of the samples held, or -1 when there are none. */
    synchronized long quantile(double q) {
        if (size == 0) {
            return -1;
        }
        long[] sorted = Arrays.copyOf(samples, size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * size);
        return sorted[Math.max(0, Math.min(size, rank) - 1)];
    }
}
