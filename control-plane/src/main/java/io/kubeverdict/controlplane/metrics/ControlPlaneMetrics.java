// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.metrics;

import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.runtime.metrics.Histograms;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Every meter the control plane exports, named once here. Labels only take values the code
 * chooses (event kinds, payload kinds, node states, informer resources): nothing a client sends
 * becomes a label, so a misbehaving agent cannot grow the series count.
 */
public final class ControlPlaneMetrics {
    /** Burst and build times: from a few events (ms) to a cold 150k-pod cluster (tens of seconds). */
    static final double[] CALCULATION_SECONDS = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30};
    /** Change seen -> agent applied: tens of ms normally, minutes for a stalled agent. */
    public static final double[] PROGRAMMING_SECONDS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120
    };

    static final double[] SNAPSHOT_BYTES = {
        1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20
    };
    static final double[] SNAPSHOT_ENDPOINTS = {1, 10, 50, 100, 250, 500, 1000};

    /** How the nodes' streams stand, one gauge per state (see {@link NodeCounts}). */
    public record NodeCounts(int inSync, int behind, int syncing, int disconnected, long maxLag) {
        public static final NodeCounts NONE = new NodeCounts(0, 0, 0, 0, 0);
    }

    private final MeterRegistry registry;
    private final Map<String, Counter> events = new ConcurrentHashMap<>();
    private final Map<String, Counter> sent = new ConcurrentHashMap<>();
    private final Timer calculation;
    private final DistributionSummary snapshotBytes;
    private final DistributionSummary snapshotEndpoints;
    private final Timer programmingLatency;
    private final Timer snapshotBuild;
    private final Timer policyEnforcement;
    private final AtomicReference<IntSupplier> policiesNotEnforced = new AtomicReference<>(() -> 0);
    private final Counter slowCut;
    private final Counter resumed;
    private final AtomicInteger connectedAgents = new AtomicInteger();
    private final Map<String, Counter> eventFailures = new ConcurrentHashMap<>();
    private final AtomicInteger eventsRetrying = new AtomicInteger();
    private final AtomicInteger problems = new AtomicInteger();
    private final AtomicInteger addressConflicts = new AtomicInteger();
    private final AtomicInteger refusedAddresses = new AtomicInteger();
    private final AtomicInteger manifestLoadOk = new AtomicInteger();
    private final AtomicLong manifestLastSuccess = new AtomicLong();
    private volatile Counter manifestLoadErrors;
    private final AtomicReference<IntSupplier> snapshotsWaiting = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> snapshotsSending = new AtomicReference<>(() -> 0);
    private final AtomicInteger manifestProblems = new AtomicInteger();
    private final Map<String, AtomicInteger> problemCounts = new ConcurrentHashMap<>();
    private final Map<String, Gauge> problemGauges = new ConcurrentHashMap<>();
    private final AtomicReference<Supplier<NodeCounts>> nodeCounts = new AtomicReference<>(() -> NodeCounts.NONE);
    private final Map<AdminPolicyKind, AtomicInteger> policyApis = new ConcurrentHashMap<>();
    private final Map<AdminPolicyKind, AtomicInteger> policyApisUnknown = new ConcurrentHashMap<>();

    public ControlPlaneMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.calculation = Histograms.timer(
                registry,
                "kubeverdict_calculation",
                "Time to apply a burst of events and build the changed nodes' snapshots",
                CALCULATION_SECONDS);
        this.snapshotBytes = Histograms.summary(
                registry,
                "kubeverdict_snapshot_size_bytes",
                "Serialized size of published node snapshots (sampled: up to 16 per burst)",
                "bytes",
                SNAPSHOT_BYTES);
        this.snapshotEndpoints = Histograms.summary(
                registry,
                "kubeverdict_snapshot_endpoints",
                "Endpoints in published node snapshots (sampled like the size)",
                null,
                SNAPSHOT_ENDPOINTS);
        this.programmingLatency = Histograms.timer(
                registry,
                "kubeverdict_programming_latency",
                "Cluster change seen by the control plane until the agent reported it applied",
                PROGRAMMING_SECONDS);
        this.snapshotBuild = Histograms.timer(
                registry,
                "kubeverdict_snapshot_build",
                "Time the calculator spent producing the changed nodes' snapshots of one burst",
                CALCULATION_SECONDS);
        this.policyEnforcement = Histograms.timer(
                registry,
                "kubeverdict_policy_enforcement_latency",
                "Policy write seen by the control plane until every node it applies to reported a snapshot "
                        + "holding that generation applied (once per generation; policies on no node are not counted)",
                PROGRAMMING_SECONDS);
        Gauge.builder(
                        "kubeverdict_policies_not_enforced",
                        policiesNotEnforced,
                        s -> s.get().getAsInt())
                .description("Policies whose newest generation has not been enforced on every node it applies to "
                        + "for longer than the control plane's threshold (60 s)")
                .register(registry);
        this.slowCut = Counter.builder("kubeverdict_sync_streams_cut_total")
                .description("Sync streams cancelled because the agent did not read for too long")
                .register(registry);
        this.resumed = Counter.builder("kubeverdict_sync_streams_resumed_total")
                .description("Sync streams that resumed from the state the agent enforces (its digest was the"
                        + " node's current snapshot's) instead of sending the full snapshot")
                .register(registry);
        Gauge.builder("kubeverdict_events_retrying", eventsRetrying, AtomicInteger::get)
                .description("Cluster events (or a publication) that failed and wait to be retried; while above 0 "
                        + "the calculation lacks them, and before the first calculation nothing is published")
                .register(registry);
        Gauge.builder("kubeverdict_connected_agents", connectedAgents, AtomicInteger::get)
                .description("Open Sync streams")
                .register(registry);
        Gauge.builder("kubeverdict_policy_problems", problems, AtomicInteger::get)
                .description("Policies or parts of policies the engine could not use")
                .register(registry);
        Gauge.builder("kubeverdict_pod_address_conflicts", addressConflicts, AtomicInteger::get)
                .description("Addresses more than one live pod claims: given to none of them until one claim ends")
                .register(registry);
        Gauge.builder("kubeverdict_pod_addresses_refused", refusedAddresses, AtomicInteger::get)
                .description("Pod addresses outside their node's pod ranges (Node spec.podCIDRs) and not its own: "
                        + "left out of every set and endpoint")
                .register(registry);
        Gauge.builder(
                        "kubeverdict_sync_snapshots_waiting",
                        snapshotsWaiting,
                        s -> s.get().getAsInt())
                .description("Sync streams waiting in line for their full snapshot")
                .register(registry);
        Gauge.builder(
                        "kubeverdict_sync_snapshots_sending",
                        snapshotsSending,
                        s -> s.get().getAsInt())
                .description("Sync streams building or sending their full snapshot (at most the admission limit)")
                .register(registry);
        Gauge.builder("kubeverdict_manifest_problems", manifestProblems, AtomicInteger::get)
                .description("Problems the last load of the manifest directory reported (unreadable documents, "
                        + "unknown fields, invalid labels, unsupported kinds)")
                .register(registry);
        nodeState("in_sync", c -> c.inSync());
        nodeState("behind", c -> c.behind());
        nodeState("syncing", c -> c.syncing());
        nodeState("disconnected", c -> c.disconnected());
        Gauge.builder(
                        "kubeverdict_max_node_lag_messages",
                        nodeCounts,
                        r -> r.get().get().maxLag())
                .description("The largest number of messages sent to one node's agent but not yet reported applied")
                .register(registry);
    }

    private void nodeState(String state, java.util.function.ToIntFunction<NodeCounts> count) {
        Gauge.builder(
                        "kubeverdict_nodes",
                        nodeCounts,
                        r -> count.applyAsInt(r.get().get()))
                .description("Nodes by the state of their agent's stream: in_sync (everything sent is applied), "
                        + "behind (applied < sent), syncing (the first snapshot is not applied yet), disconnected")
                .tag("state", state)
                .register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void eventProcessed(String kind) {
        events.computeIfAbsent(
                        kind,
                        k -> Counter.builder("kubeverdict_events_processed_total")
                                .description("Cluster events applied to the calculation")
                                .tag("kind", k)
                                .register(registry))
                .increment();
    }

    /** An event (or "publish") threw; it is retried. */
    public void eventFailed(String kind) {
        eventFailures
                .computeIfAbsent(
                        kind,
                        k -> Counter.builder("kubeverdict_event_failures_total")
                                .description(
                                        "Attempts to apply a cluster event (or to publish) that threw; each is retried")
                                .tag("kind", k)
                                .register(registry))
                .increment();
    }

    public void eventsRetrying(int count) {
        eventsRetrying.set(count);
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
        sent.computeIfAbsent(
                        payload,
                        p -> Counter.builder("kubeverdict_sync_messages_sent_total")
                                .description("Messages sent on Sync streams")
                                .tag("payload", p)
                                .register(registry))
                .increment();
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

    public void syncResumed() {
        resumed.increment();
    }

    public void programmingLatency(long nanos) {
        programmingLatency.record(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    /** A policy generation is enforced on every node it applies to, this long after its write was seen. */
    public void policyEnforcedEverywhere(long nanos) {
        policyEnforcement.record(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    /** Where the count of policies not enforced everywhere for too long comes from (read at scrape). */
    public void policiesNotEnforced(IntSupplier count) {
        policiesNotEnforced.set(count);
    }

    public Timer programmingLatencyTimer() {
        return programmingLatency;
    }

    public void problems(int count) {
        problems.set(count);
    }

    public void addressConflicts(int count) {
        addressConflicts.set(count);
    }

    public void refusedAddresses(int count) {
        refusedAddresses.set(count);
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
        Gauge.builder("kubeverdict_manifest_last_success_timestamp_seconds", manifestLastSuccess, AtomicLong::get)
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
        policyApis
                .computeIfAbsent(kind, k -> {
                    AtomicInteger v = new AtomicInteger();
                    Gauge.builder("kubeverdict_policy_api_served", v, AtomicInteger::get)
                            .description(
                                    "1 while the cluster serves this admin-tier policy kind (its CRD is installed), else 0")
                            .tag("kind", k.kind())
                            .tag("api_version", k.apiVersion())
                            .register(registry);
                    return v;
                })
                .set(served ? 1 : 0);
    }

    /**
     * Whether an admin-tier policy kind is unknown: neither confirmed absent nor watched and
     * listed (discovery or the list keeps failing); 1 or 0 per kind. Before the first
     * calculation nothing is published while any kind is unknown.
     */
    public void policyApiUnknown(AdminPolicyKind kind, boolean unknown) {
        policyApisUnknown
                .computeIfAbsent(kind, k -> {
                    AtomicInteger v = new AtomicInteger();
                    Gauge.builder("kubeverdict_policy_api_unknown", v, AtomicInteger::get)
                            .description(
                                    "1 while it is not known whether the cluster serves this admin-tier policy kind "
                                            + "(discovery or its list fails), else 0")
                            .tag("kind", k.kind())
                            .tag("api_version", k.apiVersion())
                            .register(registry);
                    return v;
                })
                .set(unknown ? 1 : 0);
    }

    /** Registers a per-node gauge; the returned handle removes it. */
    public <T> AutoCloseable nodeGauge(String name, String description, String node, T obj, ToDoubleFunction<T> f) {
        Gauge g = Gauge.builder(name, obj, f)
                .description(description)
                .tag("node", node)
                .register(registry);
        return () -> registry.remove(g);
    }

    /**
     * {@code kubeverdict_policy_problems_by_policy{namespace,policy}}: how many problems each
     * policy with problems has; a policy's series goes away when its problems are fixed. The
     * names are the cluster's (bounded by its policies), never a client's.
     */
    public synchronized void problemsByPolicy(Map<String, Integer> countByNamespacedName) {
        problemCounts.keySet().removeIf(key -> {
            if (countByNamespacedName.containsKey(key)) {
                return false;
            }
            registry.remove(problemGauges.remove(key));
            return true;
        });
        countByNamespacedName.forEach((key, count) -> {
            AtomicInteger value = problemCounts.computeIfAbsent(key, k -> {
                AtomicInteger v = new AtomicInteger();
                int slash = k.indexOf('/');
                problemGauges.put(
                        k,
                        Gauge.builder("kubeverdict_policy_problems_by_policy", v, AtomicInteger::get)
                                .description(
                                        "Unusable parts of one policy (also Kubernetes Events, reason UnusablePolicy)")
                                .tags("namespace", k.substring(0, slash), "policy", k.substring(slash + 1))
                                .register(registry));
                return v;
            });
            value.set(count);
        });
    }

    /** Where the node-state gauges read from (the sync service's nodes); read at scrape time. */
    public void nodeCounts(Supplier<NodeCounts> counts) {
        nodeCounts.set(counts);
    }

    /** A manifest load finished with this many problems. */
    public void manifestsLoaded(int problemCount) {
        manifestProblems.set(problemCount);
    }

    /** One informer's health, read at scrape time; {@code resource} is the informer's (fixed) kind. */
    public void informer(String resource, BooleanSupplier watching, BooleanSupplier synced) {
        Gauge.builder("kubeverdict_informer_watching", watching, w -> w.getAsBoolean() ? 1 : 0)
                .description("1 while the informer's watch on the API server is open")
                .tag("resource", resource)
                .strongReference(true)
                .register(registry);
        Gauge.builder("kubeverdict_informer_synced", synced, s -> s.getAsBoolean() ? 1 : 0)
                .description("1 once the informer has delivered its initial list")
                .tag("resource", resource)
                .strongReference(true)
                .register(registry);
    }

    /** A gauge of the verdict relay (observers, agent uplinks). */
    public void relayGauge(String name, String description, IntSupplier value) {
        Gauge.builder(name, value, IntSupplier::getAsInt)
                .description(description)
                .strongReference(true)
                .register(registry);
    }

    /** A counter of the verdict relay. */
    public Counter relayCounter(String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }
}
