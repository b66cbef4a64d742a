// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.nft.BridgeBlindSpots;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code kubeverdict_agent_blind_spots{family}}: bridges of the node whose bridged (same-node
 * pod-to-pod) traffic skips the forward hook, so is not enforced (audit M10). Detected when scraped,
 * at most every {@link #RECHECK_NANOS} (a bridge CNI makes its bridge at the node's first pod, often
 * after the agent started); a change is logged.
 */
public final class BlindSpotMetrics {
    private static final Logger log = LoggerFactory.getLogger(BlindSpotMetrics.class);
    static final long RECHECK_NANOS = 30_000_000_000L;

    private final Supplier<BridgeBlindSpots> detector;
    private final LongSupplier nanos;
    private BridgeBlindSpots last;
    private long checkedAt;

    BlindSpotMetrics(Supplier<BridgeBlindSpots> detector, LongSupplier nanos, BridgeBlindSpots first) {
        this.detector = Objects.requireNonNull(detector);
        this.nanos = nanos;
        this.last = first;
        this.checkedAt = nanos.getAsLong();
    }

    /** Registers the gauges, starting from {@code first} (the detection the agent logged at start). */
    public static BlindSpotMetrics register(
            MeterRegistry registry, Supplier<BridgeBlindSpots> detector, BridgeBlindSpots first) {
        BlindSpotMetrics metrics = new BlindSpotMetrics(detector, System::nanoTime, first);
        String help =
                "Linux bridges with ports whose bridged traffic skips the inet forward hook (br_netfilter not loaded "
                        + "or bridge-nf-call-iptables/ip6tables 0): same-node pod-to-pod traffic on them is not enforced";
        Gauge.builder(
                        "kubeverdict_agent_blind_spots",
                        metrics,
                        m -> m.current().ipv4().size())
                .description(help)
                .tag("family", "ipv4")
                .register(registry);
        Gauge.builder(
                        "kubeverdict_agent_blind_spots",
                        metrics,
                        m -> m.current().ipv6().size())
                .description(help)
                .tag("family", "ipv6")
                .register(registry);
        return metrics;
    }

    synchronized BridgeBlindSpots current() {
        long now = nanos.getAsLong();
        if (now - checkedAt >= RECHECK_NANOS) {
            checkedAt = now;
            BridgeBlindSpots found = detector.get();
            if (!found.ipv4().equals(last.ipv4()) || !found.ipv6().equals(last.ipv6())) {
                if (found.none()) {
                    log.info("blind spots: none any more");
                } else {
                    log.warn("blind spots: {}", found.describe());
                }
            }
            last = found;
        }
        return last;
    }
}
