// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.metrics;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import java.time.Duration;
import java.util.Arrays;

/**
 * Histograms with explicit, small bucket sets. Micrometer's percentile histograms would export
 * dozens of buckets per series (276 for a byte-sized summary, up to 4e18); each meter here names
 * its own few boundaries instead, and {@link #ONLY_EXPLICIT_BUCKETS} turns percentile histograms
 * off for every meter of a registry, including those libraries register.
 */
public final class Histograms {
    /** A registry filter: no percentile histogram and no client-side percentiles, whoever asks. */
    public static final MeterFilter ONLY_EXPLICIT_BUCKETS = new MeterFilter() {
        @Override
        public DistributionStatisticConfig configure(
                io.micrometer.core.instrument.Meter.Id id, DistributionStatisticConfig config) {
            return DistributionStatisticConfig.builder()
                    .percentilesHistogram(false)
                    .percentiles()
                    .build()
                    .merge(config);
        }
    };

    private Histograms() {}

    /** A timer exported in seconds with these bucket boundaries (seconds, ascending). */
    public static Timer timer(MeterRegistry registry, String name, String description, double... bucketSeconds) {
        return timerBuilder(name, description, bucketSeconds).register(registry);
    }

    /** The builder of {@link #timer}, for meters that need tags. */
    public static Timer.Builder timerBuilder(String name, String description, double... bucketSeconds) {
        check(name, bucketSeconds);
        Duration[] slos = Arrays.stream(bucketSeconds)
                .mapToObj(s -> Duration.ofNanos(Math.round(s * 1e9)))
                .toArray(Duration[]::new);
        return Timer.builder(name).description(description).serviceLevelObjectives(slos);
    }

    /** A distribution of plain values (bytes, counts) with these bucket boundaries. */
    public static DistributionSummary summary(
            MeterRegistry registry, String name, String description, String baseUnit, double... buckets) {
        check(name, buckets);
        return DistributionSummary.builder(name)
                .description(description)
                .baseUnit(baseUnit)
                .serviceLevelObjectives(buckets)
                .register(registry);
    }

    private static void check(String name, double[] buckets) {
        if (buckets.length == 0 || buckets.length > 16) {
            throw new IllegalArgumentException(name + ": want 1-16 buckets, got " + buckets.length);
        }
        for (int i = 1; i < buckets.length; i++) {
            if (buckets[i] <= buckets[i - 1]) {
                throw new IllegalArgumentException(name + ": buckets must ascend: " + Arrays.toString(buckets));
            }
        }
    }
}
