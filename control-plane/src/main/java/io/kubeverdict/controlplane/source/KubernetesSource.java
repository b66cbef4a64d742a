package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shared informers for Pods, Namespaces and NetworkPolicies, all cluster-wide, feeding a
 * {@link ClusterEventSink}. Periodic resyncs (same resourceVersion) are dropped here: the
 * calculation already has the object. After a watch is re-established the informer replays
 * the differences as adds/updates/deletes, which flow through unchanged.
 */
public final class KubernetesSource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KubernetesSource.class);
    public static final String NAME = "kubernetes";

    private final KubernetesClient client;
    private final ClusterEventSink sink;
    private final long resyncMillis;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private final Map<String, SharedIndexInformer<?>> byKind = new java.util.concurrent.ConcurrentSkipListMap<>();
    private volatile boolean closed;
    private final AtomicInteger listedInformers = new AtomicInteger();
    private final CompletableFuture<Void> allListed = new CompletableFuture<>();

    public KubernetesSource(KubernetesClient client, ClusterEventSink sink, long resyncMillis) {
        this.client = client;
        this.sink = sink;
        this.resyncMillis = resyncMillis;
    }

    /** Starts the informers; the sink hears {@code sourceSynced} once all three have listed. */
    public CompletableFuture<Void> start() {
        SharedIndexInformer<Namespace> ns = informer(client.namespaces().runnableInformer(resyncMillis), "namespace",
                PolicyCalculator::upsertNamespace, (c, o) -> c.deleteNamespace(o.getMetadata().getName()));
        SharedIndexInformer<Pod> pods = informer(client.pods().inAnyNamespace().runnableInformer(resyncMillis), "pod",
                PolicyCalculator::upsertPod,
                (c, o) -> c.deletePod(o.getMetadata().getNamespace(), o.getMetadata().getName()));
        SharedIndexInformer<NetworkPolicy> pols = informer(
                client.network().v1().networkPolicies().inAnyNamespace().runnableInformer(resyncMillis),
                "networkpolicy", PolicyCalculator::upsertPolicy,
                (c, o) -> c.deletePolicy(o.getMetadata().getNamespace(), o.getMetadata().getName()));
        CompletableFuture<?>[] started = List.of(ns, pods, pols).stream()
                .map(i -> i.start().toCompletableFuture()).toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(started).exceptionally(e -> {
            if (!closed) {
                log.error("informers failed to start", e);
            }
            return null;
        });
        return allListed.thenRun(() -> {
            log.info("informers synced: {} namespaces, {} pods, {} network policies",
                    ns.getStore().list().size(), pods.getStore().list().size(), pols.getStore().list().size());
            sink.sourceSynced(NAME);
        });
    }

    /** One informer delivered its first list (handlers get onList after the list's adds, in order). */
    private void listed() {
        if (listedInformers.incrementAndGet() == 3) {
            allListed.complete(null);
        }
    }

    private <T extends HasMetadata> SharedIndexInformer<T> informer(SharedIndexInformer<T> informer, String kind,
            BiConsumer<PolicyCalculator, T> upsert, BiConsumer<PolicyCalculator, T> delete) {
        informer.removeNamespaceIndex();
        informer.itemStore(new TrimmingItemStore<>());
        informer.addEventHandler(new ResourceEventHandler<T>() {
            private boolean listed;

            @Override
            public void onList(String resourceVersion, boolean initial) {
                if (!listed) {
                    listed = true;
                    listed();
                }
            }

            @Override
            public void onAdd(T obj) {
                sink.change(kind + "/upsert", upsertOf(upsert, obj));
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                if (oldObj != null && Objects.equals(oldObj.getMetadata().getResourceVersion(),
                        newObj.getMetadata().getResourceVersion())) {
                    return; // periodic resync: nothing changed
                }
                sink.change(kind + "/upsert", upsertOf(upsert, newObj));
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                sink.change(kind + "/delete", c -> delete.accept(c, obj));
            }
        });
        informers.add(informer);
        byKind.put(kind, informer);
        return informer;
    }

    private static <T> Consumer<PolicyCalculator> upsertOf(BiConsumer<PolicyCalculator, T> upsert, T obj) {
        return c -> upsert.accept(c, obj);
    }

    /** The started informers by kind (namespace, pod, networkpolicy), for health metrics. */
    public Map<String, SharedIndexInformer<?>> informers() {
        return Map.copyOf(byKind);
    }

    @Override
    public void close() {
        closed = true;
        informers.forEach(SharedIndexInformer::stop);
    }
}
