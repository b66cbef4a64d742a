package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin-tier policy APIs (AdminNetworkPolicy, BaselineAdminNetworkPolicy,
 * ClusterNetworkPolicy): CRDs a cluster may not have installed, which is not an error. API
 * discovery ({@code /apis/policy.networking.k8s.io/VERSION}, readable by every authenticated
 * client, no RBAC on CRDs needed) is asked at start and then every {@code interval}; an informer
 * runs for each kind while its API is served. When a kind appears its objects arrive as ordinary
 * adds; when discovery says it is definitely gone (its CRD was deleted, and with it every object),
 * the informer stops and every object it delivered is deleted from the calculation.
 *
 * <p>The initial state is complete once every kind is known: absent, or present and listed. A
 * discovery that fails (not a clear answer) leaves the kind unknown and is retried every second,
 * so a flaky API server at start delays the first calculation instead of publishing one without
 * the cluster's admin policies — for at most 10 attempts: waiting forever would hold back every
 * policy (an agent enforces nothing before its first snapshot), so the kind is then logged as an
 * error, reported not served, and asked for again at the normal interval.
 */
public final class AdminPolicyApis implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminPolicyApis.class);
    private static final Duration RETRY_BEFORE_SYNC = Duration.ofSeconds(1);
    private static final int MAX_ATTEMPTS_BEFORE_SYNC = 10;

    /** Told whenever a kind's API is found served or not served (for a metric). */
    public interface Listener {
        void served(AdminPolicyKind kind, boolean served);
    }

    private enum State { UNKNOWN, ABSENT, WATCHING }

    private final KubernetesClient client;
    private final ClusterEventSink sink;
    private final long resyncMillis;
    private final Duration interval;
    private final Listener listener;
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
    /** Names of the objects delivered per kind (informer threads add, the discovery thread reads). */
    private final Map<AdminPolicyKind, Set<String>> delivered = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> initial = new CompletableFuture<>();
    private final Map<AdminPolicyKind, CompletableFuture<Void>> listed = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private int attemptsBeforeSync; // discovery thread only

    AdminPolicyApis(KubernetesClient client, ClusterEventSink sink, long resyncMillis, Duration interval, Listener listener) {
        this.client = client;
        this.sink = sink;
        this.resyncMillis = resyncMillis;
        this.interval = interval;
        this.listener = listener;
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            states.put(k, State.UNKNOWN);
            delivered.put(k, ConcurrentHashMap.newKeySet());
        }
    }

    /** Starts discovering; completes once every kind's initial state is delivered. */
    CompletableFuture<Void> start() {
        discovery.execute(this::checkBeforeSync);
        return initial;
    }

    private void checkBeforeSync() {
        if (closed) {
            return;
        }
        check();
        if (states.containsValue(State.UNKNOWN) && ++attemptsBeforeSync < MAX_ATTEMPTS_BEFORE_SYNC) {
            discovery.schedule(this::checkBeforeSync, RETRY_BEFORE_SYNC.toMillis(), TimeUnit.MILLISECONDS);
            return;
        }
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            if (states.get(k) == State.UNKNOWN) {
                // Waiting longer would hold back every policy (agents enforce nothing before their
                // first snapshot); go on without this kind and keep asking.
                log.error("{} ({}): discovery keeps failing ({}); starting without it, asking again every {}s",
                        k.kind(), k.apiVersion(), lastError.get(k), interval.toSeconds());
                listener.served(k, false);
            }
        }
        CompletableFuture.allOf(listed.values().toArray(CompletableFuture[]::new)).thenRun(() -> initial.complete(null));
        discovery.scheduleWithFixedDelay(this::checkSafely, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void checkSafely() {
        try {
            check();
        } catch (RuntimeException e) {
            log.warn("admin policy API discovery failed: {}", e.toString());
        }
    }

    /** One round of discovery: per API version, which of its kinds are served. */
    private void check() {
        for (String version : List.of("v1alpha1", "v1alpha2")) {
            Set<String> served;
            try {
                APIResourceList resources = closed ? null : client.getApiResources(AdminPolicyKind.GROUP + "/" + version);
                served = resources == null || resources.getResources() == null ? Set.of()
                        : Set.copyOf(resources.getResources().stream().map(APIResource::getName).toList());
            } catch (RuntimeException e) {
                for (AdminPolicyKind k : AdminPolicyKind.values()) {
                    if (k.version().equals(version) && !e.toString().equals(lastError.put(k, e.toString()))) {
                        log.warn("could not discover {} ({}): {}; asking again", k.kind(), k.apiVersion(), e.toString());
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
        if (served && before != State.WATCHING && !closed) {
            log.info("{} ({}) is served: watching it", kind.kind(), kind.apiVersion());
            watch(kind);
            states.put(kind, State.WATCHING);
            listener.served(kind, true);
        } else if (!served && before != State.ABSENT) {
            if (before == State.WATCHING) {
                stop(kind);
            } else {
                log.info("{} ({}) is not installed: not enforced; checking again every {}s (install the CRDs of "
                        + "kubernetes-sigs/network-policy-api to use it)", kind.kind(), kind.apiVersion(), interval.toSeconds());
            }
            states.put(kind, State.ABSENT);
            listener.served(kind, false);
        }
    }

    private void watch(AdminPolicyKind kind) {
        ResourceDefinitionContext context = new ResourceDefinitionContext.Builder()
                .withGroup(AdminPolicyKind.GROUP).withVersion(kind.version()).withKind(kind.kind())
                .withPlural(kind.plural()).withNamespaced(false).build();
        CompletableFuture<Void> firstList = new CompletableFuture<>();
        listed.put(kind, firstList);
        Set<String> names = delivered.get(kind);
        SharedIndexInformer<GenericKubernetesResource> informer = InformerEvents.wire(
                client.genericKubernetesResources(context).runnableInformer(resyncMillis), sink, kind.eventKind(),
                (c, o) -> {
                    names.add(o.getMetadata().getName());
                    c.upsertAdminPolicy(o);
                },
                (c, o) -> {
                    names.remove(o.getMetadata().getName());
                    c.deleteAdminPolicy(kind, o.getMetadata().getName());
                },
                () -> firstList.complete(null));
        informers.put(kind, informer);
        informer.start().exceptionally(e -> {
            if (!closed) {
                // Served but not listable (RBAC?): not enforced. Do not hold back the first
                // calculation; discovery tries the informer again.
                log.error("{} informer failed to start: {}; not enforced, trying again", kind.kind(), e.toString());
                firstList.complete(null);
                try {
                    discovery.execute(() -> {
                        if (informers.get(kind) == informer) {
                            informers.remove(kind);
                            informer.stop();
                            states.put(kind, State.UNKNOWN);
                            listener.served(kind, false);
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    // closed meanwhile
                }
            }
            return null;
        });
    }

    /** The kind's API went away (its CRD was deleted, and every object with it). */
    private void stop(AdminPolicyKind kind) {
        SharedIndexInformer<GenericKubernetesResource> informer = informers.remove(kind);
        if (informer != null) {
            informer.stop();
        }
        Set<String> names = delivered.get(kind);
        log.warn("{} ({}) is no longer served: its {} objects are gone", kind.kind(), kind.apiVersion(), names.size());
        for (String name : List.copyOf(names)) {
            names.remove(name);
            sink.change(kind.eventKind() + "/delete", (PolicyCalculator c) -> c.deleteAdminPolicy(kind, name));
        }
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
