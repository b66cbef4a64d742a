// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.IntSupplier;

/** What the pod address guard's hold queue did: packets by outcome, how long they waited, how many wait. */
public final class HoldMetrics {
    private final MeterRegistry registry;
    private final Map<HeldPackets.Outcome, Counter> answered = new EnumMap<>(HeldPackets.Outcome.class);
    private final DistributionSummary heldSeconds;
    /** Micrometer holds gauge targets weakly: kept here for the registry's lifetime. */
    private IntSupplier held;

    public HoldMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (HeldPackets.Outcome outcome : HeldPackets.Outcome.values()) {
            answered.put(
                    outcome,
                    Counter.builder("kubeverdict_guard_packets")
                            .description(
                                    "First packets the pod address guard held (their pod address was not known yet), by "
                                            + "outcome: allowed or denied once a state knew it, timed_out, overflow")
                            .tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
                            .register(registry));
        }
        heldSeconds = DistributionSummary.builder("kubeverdict_guard_hold_seconds")
                .description("How long a held first packet waited for a state that knows its pod address")
                .serviceLevelObjectives(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5)
                .register(registry);
    }

    void watch(IntSupplier held) {
        this.held = held;
        Gauge.builder("kubeverdict_guard_held", held, IntSupplier::getAsInt)
                .description("First packets waiting now for a state that knows their pod address")
                .register(registry);
    }

    void answered(HeldPackets.Outcome outcome, long heldNanos) {
        answered.get(outcome).increment();
        heldSeconds.record(heldNanos / 1e9);
    }
}
