// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.util.Arrays;

/**
 * One measurement: connections per second over the wall time, latency percentiles (µs), and the CPU
 * time per connection (µs) of the client and echo server threads. That CPU time includes the
 * softirq work the kernel does in their context (the node's forward hook, our table's rules among
 * it, for the packets they send over the veths), and unlike wall time it does not grow while a
 * thread waits for a CPU: on a shared, loaded machine it tells a rule's cost where rates cannot.
 */
record Sample(double connPerSecond, double p50Micros, double p99Micros, double cpuMicrosPerConnection) {
    static Sample of(long wallNanos, long[] latencyNanos, long cpuNanos) {
        long[] sorted = latencyNanos.clone();
        Arrays.sort(sorted);
        return new Sample(
                sorted.length * 1e9 / wallNanos,
                percentile(sorted, 0.50) / 1e3,
                percentile(sorted, 0.99) / 1e3,
                cpuNanos / 1e3 / sorted.length);
    }

    /** Nearest-rank percentile of sorted values. */
    static double percentile(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
