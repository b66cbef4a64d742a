// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin-tier policy APIs (AdminNetworkPolicy, BaselineAdminNetworkPolicy,
 * ClusterNetworkPolicy): CRDs a cluster may not have installed, which is not an error. API
 * discovery ({@code /apis/policy.networking.k8s.io/VERSION}, readable by every authenticated
 * client, no RBAC on CRDs needed) is asked at start and then every {@code interval}; an informer
 * runs for each kind while its API is served. When a kind appears its objects arrive as ordinary
 * adds.
 *
 * <p>Removing enforced admin policies needs an authoritative answer, not one reply: a watched
 * kind is taken as gone only once discovery has said "not served" (a 404 included) continuously
 * for {@code absenceGrace} (answers that serve it reset the clock; errors are no answer either
 * way); then the informer stops and every object it delivered is deleted from the calculation. A
 * CRD that is really deleted takes its objects with it first, and the informer delivers those
 * deletes at once, so the grace only delays the backstop.
 *
 * <p>The initial state is complete once every kind is known: absent (discovery says so; nothing
 * was enforced yet, so one answer is enough), or watched and listed. A discovery that fails, or
 * an informer that cannot list (RBAC), leaves the kind unknown ({@link Listener#unknown}, for a
 * metric and an alert) and is retried; the initial state waits, however long, so a replica never
 * publishes a calculation that silently lacks the cluster's admin tiers (fail closed: it stays
 * not ready, agents keep their kept state or go to a ready replica).
 */
public final class AdminPolicyApis implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminPolicyApis.class);
    private static final Duration RETRY_BEFORE_SYNC = Duration.ofSeconds(1);
    /** The default of {@code --api-absence-grace}. */
    public static final Duration DEFAULT_ABSENCE_GRACE = Duration.ofMinutes(5);

    /** Told whenever a kind's API is found served or not served, and known or unknown (for metrics). */
    public interface Listener {
        void served(AdminPolicyKind kind, boolean served);

        /** Unknown: neither confirmed absent nor watched and listed (discovery or the list fails). */
        default void unknown(AdminPolicyKind kind, boolean unknown) {}
    }

    private enum State {
        UNKNOWN,
        ABSENT,
        WATCHING
    }

    private final KubernetesClient client;
    private final ClusterEventSink sink;
    private final long resyncMillis;
    private final Duration interval;
    private final Duration absenceGrace;
    private final Listener listener;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService discovery = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "api-discovery");
        t.setDaemon(true);
        return t;
    });
    // Discovery thread only.
    private final Map<AdminPolicyKind, State> states = new EnumMap<>(AdminPolicyKind.class);
    private final Map<AdminPolicyKind, SharedIndexInformer<GenericKubernetesResource>> informers =
            new EnumMap<>(AdminPolicyKind.class);
    private final Map<AdminPolicyKind, String> lastError = new EnumMap<>(AdminPolicyKind.class);
    /** When discovery first said "not served" for a kind it may still have objects of (nanoTime). */
    private final Map<AdminPolicyKind, Long> absentSince = new EnumMap<>(AdminPolicyKind.class);
    /** Kinds an informer ever delivered objects of: their absence must be confirmed. */
    private final Set<AdminPolicyKind> everWatched = EnumSet.noneOf(AdminPolicyKind.class);
    /** Names of the objects delivered per kind (the calculation thread adds and removes). */
    private final Map<AdminPolicyKind, Set<String>> delivered = new ConcurrentHashMap<>();

    private final CompletableFuture<Void> initial = new CompletableFuture<>();
    /** The current informer's first list per watched kind. */
    private final Map<AdminPolicyKind, CompletableFuture<Void>> listed = new ConcurrentHashMap<>();

    private volatile boolean closed;

    AdminPolicyApis(
            KubernetesClient client,
            ClusterEventSink sink,
            long resyncMillis,
            Duration interval,
            Duration absenceGrace,
            Listener listener) {
        this(client, sink, resyncMillis, interval, absenceGrace, listener, System::nanoTime);
    }

    AdminPolicyApis(
            KubernetesClient client,
            ClusterEventSink sink,
            long resyncMillis,
            Duration interval,
            Duration absenceGrace,
            Listener listener,
            LongSupplier nanoTime) {
        this.client = client;
        this.sink = sink;
        this.resyncMillis = resyncMillis;
        this.interval = interval;
        this.absenceGrace = absenceGrace;
        this.listener = listener;
        this.nanoTime = nanoTime;
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            states.put(k, State.UNKNOWN);
            delivered.put(k, ConcurrentHashMap.newKeySet());
        }
    }

    /** Starts discovering; completes once every kind's initial state is delivered. */
    CompletableFuture<Void> start() {
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            listener.unknown(k, true);
        }
        discovery.execute(FatalThreads.guard(this::round));
        return initial;
    }

    /** One round of discovery, then the next: every second until the initial state is complete. */
    private void round() {
        if (closed) {
            return;
        }
        try {
            check();
        } catch (RuntimeException e) {
            log.warn("admin policy API discovery failed: {}", e.toString());
        }
        completeIfKnown();
        Duration next = initial.isDone() ? interval : min(RETRY_BEFORE_SYNC, interval);
        schedule(this::round, next);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private void schedule(Runnable task, Duration delay) {
        try {
            discovery.schedule(FatalThreads.guard(task), delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    /** Completes the initial state once every kind is absent, or watched and listed. */
    private void completeIfKnown() {
        if (initial.isDone()) {
            return;
        }
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            State s = states.get(k);
            boolean known =
                    s == State.ABSENT || (s == State.WATCHING && listed.get(k).isDone());
            if (!known) {
                return;
            }
        }
        initial.complete(null);
    }

    /** One round of discovery: per API version, which of its kinds are served. */
    private void check() {
        for (String version : List.of("v1alpha1", "v1alpha2")) {
            Set<String> served;
            try {
                // null: the group version is not served (404), which is an answer.
                APIResourceList resources = client.getApiResources(AdminPolicyKind.GROUP + "/" + version);
                served = resources == null || resources.getResources() == null
                        ? Set.of()
                        : Set.copyOf(resources.getResources().stream()
                                .map(APIResource::getName)
                                .toList());
            } catch (RuntimeException e) {
                for (AdminPolicyKind k : AdminPolicyKind.values()) {
                    if (k.version().equals(version) && !e.toString().equals(lastError.put(k, e.toString()))) {
                        log.warn(
                                "could not discover {} ({}): {}; asking again{}",
                                k.kind(),
                                k.apiVersion(),
                                e.toString(),
                                initial.isDone() ? "" : " (the initial state waits for it)");
                    }
                }
                continue;
            }
            for (AdminPolicyKind k : AdminPolicyKind.values()) {
                if (k.version().equals(version)) {
                    lastError.remove(k);
                    update(k, served.contains(k.plural()));
                }
            }
        }
    }

    private void update(AdminPolicyKind kind, boolean served) {
        State before = states.get(kind);
        if (served) {
            Long since = absentSince.remove(kind);
            if (since != null) {
                log.info("{} ({}) is served again; its objects were kept", kind.kind(), kind.apiVersion());
            }
            if (before != State.WATCHING && !closed) {
                log.info("{} ({}) is served: watching it", kind.kind(), kind.apiVersion());
                watch(kind);
                states.put(kind, State.WATCHING);
                listener.served(kind, true);
                // Known once listed (completeIfKnown, and the unknown gauge via the first list).
            }
        } else if (before != State.ABSENT) {
            if (everWatched.contains(kind) && !absentLongEnough(kind)) {
                return;
            }
            absentSince.remove(kind);
            if (everWatched.contains(kind)) {
                stop(kind);
            } else {
                log.info(
                        "{} ({}) is not installed: not enforced; checking again every {}s (install the CRDs of "
                                + "kubernetes-sigs/network-policy-api to use it)",
                        kind.kind(),
                        kind.apiVersion(),
                        interval.toSeconds());
            }
            states.put(kind, State.ABSENT);
            listener.served(kind, false);
            listener.unknown(kind, false);
        }
    }

    /** Whether discovery has said "not served" for the grace without a break; logs the first such answer. */
    private boolean absentLongEnough(AdminPolicyKind kind) {
        long now = nanoTime.getAsLong();
        Long since = absentSince.putIfAbsent(kind, now);
        if (since == null) {
            log.warn(
                    "{} ({}): discovery says it is not served; keeping its {} objects enforced until it says so for {} "
                            + "(--api-absence-grace)",
                    kind.kind(),
                    kind.apiVersion(),
                    delivered.get(kind).size(),
                    absenceGrace);
            since = now;
        }
        return now - since >= absenceGrace.toNanos();
    }

    private void watch(AdminPolicyKind kind) {
        ResourceDefinitionContext context = new ResourceDefinitionContext.Builder()
                .withGroup(AdminPolicyKind.GROUP)
                .withVersion(kind.version())
                .withKind(kind.kind())
                .withPlural(kind.plural())
                .withNamespaced(false)
                .build();
        CompletableFuture<Void> firstList = new CompletableFuture<>();
        listed.put(kind, firstList);
        everWatched.add(kind);
        Set<String> names = delivered.get(kind);
        SharedIndexInformer<GenericKubernetesResource>[] self = new SharedIndexInformer[1];
        SharedIndexInformer<GenericKubernetesResource> informer = InformerEvents.wire(
                client.genericKubernetesResources(context).runnableInformer(resyncMillis),
                sink,
                kind.eventKind(),
                (c, o) -> {
                    names.add(o.getMetadata().getName());
                    c.upsertAdminPolicy(o);
                },
                (c, o) -> {
                    names.remove(o.getMetadata().getName());
                    c.deleteAdminPolicy(kind, o.getMetadata().getName());
                },
                () -> {
                    forgetUnlisted(kind, self[0]);
                    firstList.complete(null);
                    onDiscoveryThread(() -> {
                        if (listed.get(kind) == firstList) {
                            listener.unknown(kind, false);
                            completeIfKnown();
                        }
                    });
                });
        self[0] = informer;
        informers.put(kind, informer);
        informer.start().exceptionally(e -> {
            if (!closed) {
                // Served but not listable (RBAC?): unknown. What it delivered before stays
                // enforced; the initial state waits; discovery tries the informer again.
                log.error(
                        "{} informer failed to start: {}; its kind is unknown, trying again",
                        kind.kind(),
                        e.toString());
                onDiscoveryThread(() -> {
                    if (informers.get(kind) == informer) {
                        informers.remove(kind);
                        informer.stop();
                        states.put(kind, State.UNKNOWN);
                        listener.served(kind, false);
                        listener.unknown(kind, true);
                    }
                });
            }
            return null;
        });
    }

    /**
     * A (re)started informer's first list: objects an earlier informer delivered that the list no
     * longer has were deleted while nothing watched; delete them (queued after the list's adds).
     */
    private void forgetUnlisted(AdminPolicyKind kind, SharedIndexInformer<GenericKubernetesResource> informer) {
        Set<String> present = Set.copyOf(informer.getStore().list().stream()
                .map(o -> o.getMetadata().getName())
                .toList());
        Set<String> names = delivered.get(kind);
        sink.change(kind.eventKind() + "/delete", c -> {
            for (String name : List.copyOf(names)) {
                if (!present.contains(name)) {
                    c.deleteAdminPolicy(kind, name);
                    names.remove(name); // after: a retry of this change finds what is left
                }
            }
        });
    }

    private void onDiscoveryThread(Runnable task) {
        try {
            discovery.execute(FatalThreads.guard(task));
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    /** The kind's API is gone for the grace (its CRD was deleted, and every object with it). */
    private void stop(AdminPolicyKind kind) {
        SharedIndexInformer<GenericKubernetesResource> informer = informers.remove(kind);
        if (informer != null) {
            informer.stop();
        }
        listed.remove(kind);
        Set<String> names = delivered.get(kind);
        log.warn(
                "{} ({}) has not been served for {}: its objects are gone",
                kind.kind(),
                kind.apiVersion(),
                absenceGrace);
        // On the calculation thread, after whatever the informer queued before it stopped.
        sink.change(kind.eventKind() + "/delete", c -> {
            for (String name : List.copyOf(names)) {
                c.deleteAdminPolicy(kind, name);
                names.remove(name); // after: a retry of this change finds what is left
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        discovery.shutdownNow();
        try {
            discovery.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        informers.values().forEach(SharedIndexInformer::stop);
    }
}
