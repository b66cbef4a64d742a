// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.runtime.FatalThreads;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The flow history's edge: relayed verdicts in (from the verdict relay's threads), its metrics,
 * expiry of old buckets, and the optional file (read once at start, written every
 * {@code writeEvery} and on close).
 */
public final class FlowRecorder implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FlowRecorder.class);

    /** @param file null: memory only */
    public record Settings(FlowHistory.Limits limits, Path file, Duration writeEvery) {}

    /** How long after its end a bucket is handed to the sink: verdicts arrive a few seconds late. */
    public static final Duration EXPORT_GRACE = Duration.ofSeconds(5);

    private final FlowHistory history;
    private final FlowHistoryFile file;
    private final Function<String, Optional<PartialVerdicts.Placed>> pods;
    private final PartialVerdicts.DirectionDecider decider;
    private final Counter incomplete;
    private final LongSupplier clock;
    private final ScheduledExecutorService timer;
    private final Counter writeFailures;
    private final MeterRegistry registry;
    private volatile FlowSink sink;

    public FlowRecorder(
            Settings settings,
            Function<String, Optional<PartialVerdicts.Placed>> pods,
            PartialVerdicts.DirectionDecider decider,
            MeterRegistry registry,
            LongSupplier clockMillis) {
        this.history = new FlowHistory(settings.limits());
        this.file = settings.file() == null ? null : new FlowHistoryFile(settings.file());
        this.pods = pods;
        this.decider = decider;
        this.clock = clockMillis;
        this.registry = registry;
        Gauge.builder("kubeverdict_flow_history_records", history, FlowHistory::records)
                .description("Flow records the flow history holds (one per flow and time bucket)")
                .register(registry);
        Gauge.builder("kubeverdict_flow_history_bytes", history, FlowHistory::approximateBytes)
                .description("Approximate heap bytes of the flow history's records (capped by --flow-history-max-mib)")
                .register(registry);
        FunctionCounter.builder("kubeverdict_flow_history_dropped_total", history, FlowHistory::dropped)
                .description("Verdicts of new flows not recorded because the flow history was full with the current "
                        + "bucket alone")
                .register(registry);
        FunctionCounter.builder("kubeverdict_flow_history_evicted_total", history, FlowHistory::evicted)
                .description("Flow records removed before their time to stay under the flow history's caps")
                .register(registry);
        FunctionCounter.builder("kubeverdict_flow_history_expired_total", history, FlowHistory::expired)
                .description("Flow records removed because they left the flow history's window")
                .register(registry);
        incomplete = Counter.builder("kubeverdict_flow_history_incomplete_total")
                .description("Verdicts recorded as their node reported them because the other side's node could not "
                        + "decide its direction (its snapshot was not at hand)")
                .register(registry);
        writeFailures = Counter.builder("kubeverdict_flow_history_write_failures_total")
                .description("Writes of --flow-history-file that failed (the history in memory is unaffected)")
                .register(registry);
        if (file != null) {
            int restored = 0;
            long now = clock.getAsLong();
            for (FlowHistory.Held h : file.read()) {
                restored += history.restore(h, now) ? 1 : 0;
            }
            log.info("flow history: {} records restored from {}", restored, file.path());
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "flow-history");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(
                FatalThreads.guard(() -> history.expire(clock.getAsLong())), 1, 1, TimeUnit.SECONDS);
        if (file != null) {
            long every = settings.writeEvery().toMillis();
            timer.scheduleWithFixedDelay(FatalThreads.guard(this::write), every, every, TimeUnit.MILLISECONDS);
        }
    }

    public FlowHistory history() {
        return history;
    }

    /** A relayed verdict (any relay thread). */
    public void record(VerdictEvent event) {
        Optional<VerdictEvent> whole;
        try {
            whole = PartialVerdicts.complete(event, pods, decider);
        } catch (RuntimeException e) {
            incomplete.increment(); // the far node's snapshot went away meanwhile: keep what its node said
            whole = Optional.of(event);
        }
        whole.flatMap(e -> FlowEvents.observation(e, this::labelsOf))
                .ifPresent(o -> history.record(o, event.getCount(), clock.getAsLong())); // 0 (older agents): 1
    }

    /**
     * Hands every record to {@code to} once its bucket has ended (and {@link #EXPORT_GRACE} more,
     * for verdicts agents upload late), checked every second; the open buckets at close. A verdict
     * that lands in a bucket already handed out is handed out again with its own count.
     *
     * @param start makes the sink, with its metrics on the recorder's registry
     */
    public void exportTo(Function<MeterRegistry, ? extends FlowSink> start) {
        FlowSink to = start.apply(registry);
        sink = to;
        timer.scheduleWithFixedDelay(
                FatalThreads.guard(() -> handOut(to, clock.getAsLong() - EXPORT_GRACE.toMillis())),
                1,
                1,
                TimeUnit.SECONDS);
    }

    /** An optional export must not take the history down with it: a sink that throws loses those records. */
    private void handOut(FlowSink to, long endedBy) {
        List<FlowHistory.Held> records = history.unexported(endedBy);
        try {
            to.accept(records);
        } catch (RuntimeException e) {
            log.warn("flow export: {} records lost: {}", records.size(), e.toString());
        }
    }

    private Map<String, String> labelsOf(String pod) {
        return pods.apply(pod).map(PartialVerdicts.Placed::labels).orElse(Map.of());
    }

    private void write() {
        try {
            file.write(history.held());
        } catch (IOException | RuntimeException e) {
            writeFailures.increment();
            log.warn("cannot write the flow history to {}: {}", file.path(), e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        FlowSink to = sink;
        if (to != null) {
            try {
                handOut(to, Long.MAX_VALUE);
            } finally {
                to.close();
            }
        }
        if (file != null) {
            write();
        }
    }
}
