// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The flow export's bound and its outcomes: at most {@code maxPending} records handed to the
 * exporter and not yet sent or failed; beyond, records are dropped and counted, never waited for.
 * A streak of failures (or of drops) is logged once, when it starts, and once when it ends.
 */
final class FlowExportCounts {
    private static final Logger log = LoggerFactory.getLogger(FlowExportCounts.class);
    static final String RECORDS = "kubeverdict_flow_export_records_total";

    private final String destination;
    private final int maxPending;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicBoolean failing = new AtomicBoolean();
    private final AtomicBoolean dropping = new AtomicBoolean();
    private final Counter exported;
    private final Counter failed;
    private final Counter dropped;

    FlowExportCounts(String destination, int maxPending, MeterRegistry registry) {
        this.destination = destination;
        this.maxPending = maxPending;
        exported = outcome(registry, "exported", "Flow records the collector accepted");
        failed = outcome(registry, "failed", "Flow records whose export failed (collector unreachable or refusing)");
        dropped = outcome(
                registry, "dropped", "Flow records dropped because --flow-export-queue records were waiting already");
        Gauge.builder("kubeverdict_flow_export_pending", pending, AtomicInteger::get)
                .description("Flow records handed to the OTLP exporter and not yet sent or failed")
                .register(registry);
    }

    private static Counter outcome(MeterRegistry registry, String outcome, String description) {
        return Counter.builder(RECORDS)
                .tag("outcome", outcome)
                .description("Flow records exported as OTLP logs, by outcome: " + description)
                .register(registry);
    }

    /** Takes a place for one record; false (counted as dropped) when the queue is full. */
    boolean admit() {
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            dropped.increment();
            if (dropping.compareAndSet(false, true)) {
                log.warn(
                        "flow export to {}: {} records wait already; dropping new ones (counted in {}"
                                + "{outcome=\"dropped\"}) until there is room",
                        destination,
                        maxPending,
                        RECORDS);
            }
            return false;
        }
        if (dropping.compareAndSet(true, false)) {
            log.info("flow export to {}: room again, {} records dropped so far", destination, (long) dropped.count());
        }
        return true;
    }

    /** A record admitted but never handed to the exporter (it could not be built). */
    void abandoned() {
        pending.decrementAndGet();
        failed.increment();
    }

    void sent(int records) {
        pending.addAndGet(-records);
        exported.increment(records);
        if (failing.compareAndSet(true, false)) {
            log.info("flow export to {} works again ({} records failed so far)", destination, (long) failed.count());
        }
    }

    void failed(int records, Throwable reason) {
        pending.addAndGet(-records);
        failed.increment(records);
        if (failing.compareAndSet(false, true)) {
            log.warn(
                    "cannot export flow records to {}: {} (counted in {}{outcome=\"failed\"}; logged again when "
                            + "an export works)",
                    destination,
                    reason == null ? "the export failed" : reason.toString(),
                    RECORDS);
        }
    }
}
