// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import java.time.Duration;

/** Short durations for tables: 850us, 42ms, 1.5s, 4m12s, 3h5m, 2d4h. */
final class Durations {
    private Durations() {}

    static String compact(Duration d) {
        if (d.isNegative()) {
            d = Duration.ZERO;
        }
        long nanos = d.toNanos();
        if (nanos < 1_000_000) {
            return (nanos / 1000) + "us";
        }
        if (nanos < 1_000_000_000) {
            return (nanos / 1_000_000) + "ms";
        }
        long s = d.getSeconds();
        if (s < 10) {
            return String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
        }
        if (s < 60) {
            return s + "s";
        }
        if (s < 3600) {
            return (s / 60) + "m" + (s % 60) + "s";
        }
        if (s < 86400) {
            return (s / 3600) + "h" + (s % 3600 / 60) + "m";
        }
        return (s / 86400) + "d" + (s % 86400 / 3600) + "h";
    }
}
