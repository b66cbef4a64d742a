// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.util.Arrays;

/** One measurement: connections per second over the wall time, and latency percentiles (µs). */
record Sample(double connPerSecond, double p50Micros, double p99Micros) {
    static Sample of(long wallNanos, long[] latencyNanos) {
        long[] sorted = latencyNanos.clone();
        Arrays.sort(sorted);
        return new Sample(
                sorted.length * 1e9 / wallNanos, percentile(sorted, 0.50) / 1e3, percentile(sorted, 0.99) / 1e3);
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
