package io.kubeverdict.controlplane.metrics;

import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import java.util.function.ToDoubleFunction;

/** Every meter the control plane exports, named once here. */
public final class ControlPlaneMetrics {
    private final MeterRegistry registry;
    private final Map<String, Counter> events = new ConcurrentHashMap<>();
    private final Map<String, Counter> sent = new ConcurrentHashMap<>();
    private final Timer calculation;
    private final DistributionSummary snapshotBytes;
    private final DistributionSummary snapshotEndpoints;
    private final Timer programmingLatency;
    private final Timer snapshotBuild;
    private final Counter slowCut;
    private final AtomicInteger connectedAgents = new AtomicInteger();
    private final AtomicInteger problems = new AtomicInteger();
    private final AtomicInteger manifestLoadOk = new AtomicInteger();
    private final AtomicLong manifestLastSuccess = new AtomicLong();
    private volatile Counter manifestLoadErrors;
    private final AtomicReference<IntSupplier> snapshotsWaiting = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> snapshotsSending = new AtomicReference<>(() -> 0);
    private final Map<AdminPolicyKind, AtomicInteger> policyApis = new ConcurrentHashMap<>();

    public ControlPlaneMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.calculation = Timer.builder("kubeverdict_calculation")
                .description("Time to apply a burst of events and build the changed nodes' snapshots")
                .publishPercentileHistogram().register(registry);
        this.snapshotBytes = DistributionSummary.builder("kubeverdict_snapshot_size_bytes")
                .description("Serialized size of published node snapshots (sampled: up to 16 per burst)").baseUnit("bytes")
                .publishPercentileHistogram().register(registry);
        this.snapshotEndpoints = DistributionSummary.builder("kubeverdict_snapshot_endpoints")
                .description("Endpoints in published node snapshots").register(registry);
        this.programmingLatency = Timer.builder("kubeverdict_programming_latency")
                .description("Cluster change seen by the control plane until the agent reported it applied")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(2))
                .register(registry);
        this.snapshotBuild = Timer.builder("kubeverdict_snapshot_build")
                .description("Time the calculator spent producing the changed nodes' snapshots of one burst")
                .register(registry);
        this.slowCut = Counter.builder("kubeverdict_sync_streams_cut_total")
                .description("Sync streams cancelled because the agent did not read for too long")
                .register(registry);
        Gauge.builder("kubeverdict_connected_agents", connectedAgents, AtomicInteger::get)
                .description("Open Sync streams").register(registry);
        Gauge.builder("kubeverdict_policy_problems", problems, AtomicInteger::get)
                .description("Policies or parts of policies the engine could not use").register(registry);
        Gauge.builder("kubeverdict_sync_snapshots_waiting", snapshotsWaiting, s -> s.get().getAsInt())
                .description("Sync streams waiting in line for their full snapshot").register(registry);
        Gauge.builder("kubeverdict_sync_snapshots_sending", snapshotsSending, s -> s.get().getAsInt())
                .description("Sync streams building or sending their full snapshot (at most the admission limit)")
                .register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void eventProcessed(String kind) {
        events.computeIfAbsent(kind, k -> Counter.builder("kubeverdict_events_processed_total")
                .description("Cluster events applied to the calculation").tag("kind", k)
                .register(registry)).increment();
    }

    public void calculationTook(long nanos) {
        calculation.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void snapshotsBuilt(int nodes, long nanos) {
        snapshotBuild.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void snapshotPublished(int bytes, int endpoints) {
        snapshotBytes.record(bytes);
        snapshotEndpoints.record(endpoints);
    }

    public void messageSent(String payload) {
        sent.computeIfAbsent(payload, p -> Counter.builder("kubeverdict_sync_messages_sent_total")
                .description("Messages sent on Sync streams").tag("payload", p)
                .register(registry)).increment();
    }

    public double messagesSent() {
        return sent.values().stream().mapToDouble(Counter::count).sum();
    }

    public void streamOpened() {
        connectedAgents.incrementAndGet();
    }

    public void streamClosed() {
        connectedAgents.decrementAndGet();
    }

    public void streamCut() {
        slowCut.increment();
    }

    public void programmingLatency(long nanos) {
        programmingLatency.record(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    public Timer programmingLatencyTimer() {
        return programmingLatency;
    }

    public void problems(int count) {
        problems.set(count);
    }

    /** Registers the manifest directory's meters (only a control plane on --manifests has them). */
    public synchronized void registerManifestLoads() {
        if (manifestLoadErrors != null) {
            return;
        }
        manifestLoadErrors = Counter.builder("kubeverdict_manifest_load_errors_total")
                .description("Manifest directory loads rejected (the previous state was kept); "
                        + "retries that fail the same way are not counted again")
                .register(registry);
        Gauge.builder("kubeverdict_manifest_load_ok", manifestLoadOk, AtomicInteger::get)
                .description("1 when the manifest directory's last load was applied, 0 when it was rejected "
                        + "or nothing has loaded yet")
                .register(registry);
        Gauge.builder("kubeverdict_manifest_last_success_timestamp_seconds", manifestLastSuccess,
                        AtomicLong::get)
                .description("Unix time of the manifest directory's last applied load (0: none yet)")
                .register(registry);
    }

    public void manifestLoadSucceeded(long unixSeconds) {
        registerManifestLoads();
        manifestLoadOk.set(1);
        manifestLastSuccess.set(unixSeconds);
    }

    public void manifestLoadFailed() {
        registerManifestLoads();
        manifestLoadErrors.increment();
        manifestLoadOk.set(0);
    }

    /** Where the snapshot admission gauges read from (the newest sync service). */
    public void snapshotAdmission(IntSupplier waiting, IntSupplier sending) {
        snapshotsWaiting.set(waiting);
        snapshotsSending.set(sending);
    }

    /** Whether the cluster serves an admin-tier policy API (its CRD is installed): 1 or 0 per kind. */
    public void policyApiServed(AdminPolicyKind kind, boolean served) {
        policyApis.computeIfAbsent(kind, k -> {
            AtomicInteger v = new AtomicInteger();
            Gauge.builder("kubeverdict_policy_api_served", v, AtomicInteger::get)
                    .description("1 while the cluster serves this admin-tier policy kind (its CRD is installed), else 0")
                    .tag("kind", k.kind()).tag("api_version", k.apiVersion()).register(registry);
            return v;
        }).set(served ? 1 : 0);
    }

    /** Registers a per-node gauge; the returned handle removes it. */
    public <T> AutoCloseable nodeGauge(String name, String description, String node, T obj, ToDoubleFunction<T> f) {
        Gauge g = Gauge.builder(name, obj, f).description(description).tag("node", node).register(registry);
        return () -> registry.remove(g);
    }
}
