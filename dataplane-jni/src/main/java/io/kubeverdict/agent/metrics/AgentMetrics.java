// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import io.kubeverdict.agent.state.EnforcedState;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.AppliedListener;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.runtime.metrics.Histograms;
import io.kubeverdict.runtime.metrics.ProcessMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The agent's Prometheus registry: verdict meters, the kernel queue's counters (read when
 * scraped), sync progress and lag, the size of the enforced state, and (from {@link ProcessMetrics})
 * JVM metrics and kubeverdict_build_info.
 */
public final class AgentMetrics implements AppliedListener, AutoCloseable {
    private final ProcessMetrics process = new ProcessMetrics("agent");
    private final PrometheusMeterRegistry registry = process.registry();
    private final VerdictMetrics verdicts;
    private final PolicyVerdictMetrics policyVerdicts;
    private final StagedVerdictMetrics stagedVerdicts;
    private final NftApplyMetrics nftApply;
    private final Timer programmingLatency;
    private final Clock clock;
    // Micrometer holds gauge targets weakly: keep them reachable for the registry's lifetime.
    private final List<CachedQueueCounters> queueCounters;
    private final SyncStatus sync;
    private final StateHolder state;

    /** Programming latency, control plane's event time to applied here: ms normally, a minute when stalled. */
    static final double[] PROGRAMMING_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

    public AgentMetrics(SyncStatus sync, StateHolder state, Supplier<Optional<QueueCounters>> queue, Clock clock) {
        this(sync, state, queue, clock, 0);
    }

    /** @param policyVerdictSeries see {@link PolicyVerdictMetrics}; 0: no per-policy verdict counter */
    public AgentMetrics(
            SyncStatus sync,
            StateHolder state,
            Supplier<Optional<QueueCounters>> queue,
            Clock clock,
            int policyVerdictSeries) {
        this(sync, state, new int[] {-1}, q -> queue.get(), clock, policyVerdictSeries);
    }

    /**
     * @param queues the verdict queues; each gets its own kernel counter series, labelled
     *     {@code queue} (at most {@link io.kubeverdict.agent.run.AgentConfig#MAX_QUEUES} values);
     *     a negative number: one series without the label
     * @param readQueue the kernel's counters of one queue, empty when it is not bound
     */
    public AgentMetrics(
            SyncStatus sync,
            StateHolder state,
            int[] queues,
            IntFunction<Optional<QueueCounters>> readQueue,
            Clock clock,
            int policyVerdictSeries) {
        this.clock = clock;
        this.sync = sync;
        this.state = state;
        this.verdicts = new VerdictMetrics(registry);
        this.policyVerdicts = new PolicyVerdictMetrics(registry, policyVerdictSeries);
        this.stagedVerdicts = new StagedVerdictMetrics(registry, Math.max(policyVerdictSeries, 1));
        this.nftApply = new NftApplyMetrics(registry);

        List<CachedQueueCounters> cachedQueues = new ArrayList<>();
        for (int queue : queues) {
            CachedQueueCounters cached = new CachedQueueCounters(() -> readQueue.apply(queue));
            cachedQueues.add(cached);
            Tags tags = queue < 0 ? Tags.empty() : Tags.of("queue", Integer.toString(queue));
            // From /proc/net/netfilter/nfnetlink_queue; the kernel restarts them when the queue is rebound.
            FunctionCounter.builder(
                            "kubeverdict_queue_packets",
                            cached,
                            c -> c.get().map(QueueCounters::idSequence).orElse(0L))
                    .description("Packets the kernel put on our NFQUEUE since it was bound (its id sequence)")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder(
                            "kubeverdict_queue_dropped",
                            cached,
                            c -> c.get().map(QueueCounters::dropped).orElse(0L))
                    .description("Packets the kernel dropped because our queue was full")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder(
                            "kubeverdict_queue_user_dropped",
                            cached,
                            c -> c.get().map(QueueCounters::userDropped).orElse(0L))
                    .description("Packets the kernel could not deliver to the agent's socket")
                    .tags(tags)
                    .register(registry);
            Gauge.builder(
                            "kubeverdict_queue_waiting",
                            cached,
                            c -> c.get().map(QueueCounters::waiting).orElse(0L))
                    .description("Packets waiting on our queue for a verdict now")
                    .tags(tags)
                    .register(registry);
            Gauge.builder("kubeverdict_queue_bound", cached, c -> c.get().isPresent() ? 1 : 0)
                    .description("1 when our queue is bound")
                    .tags(tags)
                    .register(registry);
        }
        this.queueCounters = cachedQueues;

        gauge("kubeverdict_sync_connected", sync, s -> s.connected() ? 1 : 0, "1 while the sync stream is open");
        gauge(
                "kubeverdict_sync_in_sync",
                sync,
                s -> s.inSync() ? 1 : 0,
                "1 once the current stream's state is applied");
        gauge("kubeverdict_sync_applied_sequence", sync, SyncStatus::appliedSequence, "Sequence of the enforced state");
        gauge(
                "kubeverdict_sync_received_sequence",
                sync,
                SyncStatus::receivedSequence,
                "Sequence of the last message received");
        gauge(
                "kubeverdict_sync_seconds_since_last_message",
                sync,
                s -> s.lastMessageNanos() == 0 ? Double.NaN : (System.nanoTime() - s.lastMessageNanos()) / 1e9,
                "Seconds since the control plane last sent anything");
        FunctionCounter.builder("kubeverdict_sync_reconnects", sync, SyncStatus::reconnects)
                .description("Reconnects to the control plane")
                .register(registry);
        FunctionCounter.builder("kubeverdict_sync_resyncs", sync, SyncStatus::resyncs)
                .description("Streams abandoned for a sequence gap, a message that did not fit or a failed apply")
                .register(registry);
        FunctionCounter.builder("kubeverdict_sync_messages", sync, SyncStatus::messages)
                .description("Messages received from the control plane")
                .register(registry);
        programmingLatency = Histograms.timer(
                registry,
                "kubeverdict_sync_programming_latency",
                "From the control plane seeing a change to its effect in this node's kernel "
                        + "(two clocks: meaningful when they are synchronised)",
                PROGRAMMING_SECONDS);

        gauge(
                "kubeverdict_endpoints",
                state,
                s -> size(s.current(), c -> c.snapshot().getEndpointsCount()),
                "Local endpoints in the enforced state");
        gauge(
                "kubeverdict_policies",
                state,
                s -> size(s.current(), c -> c.snapshot().getPoliciesCount()),
                "Policies in the enforced state");
        gauge(
                "kubeverdict_ip_sets",
                state,
                s -> size(s.current(), c -> c.snapshot().getIpSetsCount()),
                "IP sets in the enforced state");
        gauge(
                "kubeverdict_selected_addresses",
                state,
                s -> size(s.current(), c -> c.selected().size()),
                "Local pod addresses whose new connections are queued");
    }

    private <T> void gauge(String name, T target, ToDoubleFunction<T> value, String description) {
        Gauge.builder(name, target, value).description(description).register(registry);
    }

    private static double size(EnforcedState state, ToDoubleFunction<EnforcedState> size) {
        return state == null ? 0 : size.applyAsDouble(state);
    }

    public VerdictMetrics verdicts() {
        return verdicts;
    }

    public PolicyVerdictMetrics policyVerdicts() {
        return policyVerdicts;
    }

    public StagedVerdictMetrics stagedVerdicts() {
        return stagedVerdicts;
    }

    public NftApplyMetrics nftApply() {
        return nftApply;
    }

    /**
     * Packets our table sent to the verdict queues, read from its counter at each scrape. Less the
     * queues' ids ({@code kubeverdict_queue_packets_total}) and overflow drops: the packets that
     * never reached the agent (a full queue when fail-open, or no listener), which the kernel counts
     * nowhere.
     */
    public void queuedByTable(LongSupplier count) {
        FunctionCounter.builder("kubeverdict_queue_entered", count, LongSupplier::getAsLong)
                .description("Packets our table sent to the verdict queues (its nft counter); minus the queues' "
                        + "packets and drops, those that passed or were dropped without reaching the agent")
                .register(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void applied(long sequence, long eventTimeUnixNanos) {
        if (eventTimeUnixNanos > 0) {
            long now = TimeUnit.MILLISECONDS.toNanos(clock.millis());
            long latency = now - eventTimeUnixNanos;
            if (latency >= 0) {
                programmingLatency.record(latency, TimeUnit.NANOSECONDS);
            }
        }
    }

    @Override
    public void close() {
        process.close();
    }

    /** One /proc read per scrape, however many meters ask. */
    private static final class CachedQueueCounters {
        private final Supplier<Optional<QueueCounters>> source;
        private Optional<QueueCounters> last = Optional.empty();
        private long readAt;

        CachedQueueCounters(Supplier<Optional<QueueCounters>> source) {
            this.source = source;
        }

        synchronized Optional<QueueCounters> get() {
            long now = System.nanoTime();
            if (readAt == 0 || now - readAt > 500_000_000L) {
                try {
                    last = source.get();
                } catch (RuntimeException e) {
                    last = Optional.empty();
                }
                readAt = now;
            }
            return last;
        }
    }
}
