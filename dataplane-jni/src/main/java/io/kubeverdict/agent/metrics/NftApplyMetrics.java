// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.runtime.metrics.Histograms;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * How long programming nftables takes and how often it fails: {@code start} writes the whole
 * table (at the first InSync), {@code update} changes set elements.
 */
public final class NftApplyMetrics {
    static final double[] APPLY_SECONDS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};

    private final Timer start;
    private final Timer update;
    private final Counter startFailures;
    private final Counter updateFailures;

    public NftApplyMetrics(MeterRegistry registry) {
        String help = "Time one nftables transaction of the agent took (start: the whole table; update: set elements)";
        start = Histograms.timerBuilder("kubeverdict_nft_apply", help, APPLY_SECONDS)
                .tag("operation", "start")
                .register(registry);
        update = Histograms.timerBuilder("kubeverdict_nft_apply", help, APPLY_SECONDS)
                .tag("operation", "update")
                .register(registry);
        String failures = "nftables transactions that failed (the stream resyncs and the apply is retried)";
        startFailures = Counter.builder("kubeverdict_nft_apply_failures")
                .description(failures)
                .tag("operation", "start")
                .register(registry);
        updateFailures = Counter.builder("kubeverdict_nft_apply_failures")
                .description(failures)
                .tag("operation", "update")
                .register(registry);
    }

    /** Records one transaction. */
    public void applied(boolean wholeTable, long nanos, boolean ok) {
        (wholeTable ? start : update).record(nanos, TimeUnit.NANOSECONDS);
        if (!ok) {
            (wholeTable ? startFailures : updateFailures).increment();
        }
    }
}
