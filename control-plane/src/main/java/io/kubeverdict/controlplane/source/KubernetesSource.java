// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shared informers for Pods, Namespaces, NetworkPolicies and Nodes, all cluster-wide, and for the
 * admin-tier policy kinds whose CRDs are installed ({@link AdminPolicyApis}), feeding a
 * {@link ClusterEventSink}. Periodic resyncs (same resourceVersion) are dropped: the calculation
 * already has the object. After a watch is re-established the informer replays the differences
 * as adds/updates/deletes, which flow through unchanged.
 */
public final class KubernetesSource implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KubernetesSource.class);
    public static final String NAME = "kubernetes";
    /** How often a missing admin-tier policy API is looked for (and a present one checked). */
    public static final Duration DEFAULT_API_DISCOVERY = Duration.ofSeconds(30);

    private static final int CORE_INFORMERS = 4;

    private final KubernetesClient client;
    private final ClusterEventSink sink;
    private final long resyncMillis;
    private final AdminPolicyApis adminApis;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
    private final Map<String, SharedIndexInformer<?>> byKind = new java.util.concurrent.ConcurrentSkipListMap<>();
    private volatile boolean closed;
    private final AtomicInteger listedInformers = new AtomicInteger();
    private final CompletableFuture<Void> coreListed = new CompletableFuture<>();
    private volatile SharedIndexInformer<Pod> podInformer;

    public KubernetesSource(KubernetesClient client, ClusterEventSink sink, long resyncMillis) {
        this(
                client,
                sink,
                resyncMillis,
                DEFAULT_API_DISCOVERY,
                AdminPolicyApis.DEFAULT_ABSENCE_GRACE,
                (kind, served) -> {});
    }

    /**
     * @param apiDiscovery how often the admin-tier policy APIs are looked for
     * @param absenceGrace how long discovery must say a watched kind is not served before its
     *     objects are removed
     * @param apis told whether each admin-tier policy API is served, and whether it is unknown (for metrics)
     */
    public KubernetesSource(
            KubernetesClient client,
            ClusterEventSink sink,
            long resyncMillis,
            Duration apiDiscovery,
            Duration absenceGrace,
            AdminPolicyApis.Listener apis) {
        this.client = client;
        this.sink = sink;
        this.resyncMillis = resyncMillis;
        this.adminApis = new AdminPolicyApis(client, sink, resyncMillis, apiDiscovery, absenceGrace, apis);
    }

    /**
     * Starts the informers; the sink hears {@code sourceSynced} once the four core informers have
     * listed and every admin-tier kind is known (absent, or watched and listed).
     */
    public CompletableFuture<Void> start() {
        SharedIndexInformer<Namespace> ns = informer(
                client.namespaces().runnableInformer(resyncMillis),
                "namespace",
                PolicyCalculator::upsertNamespace,
                (c, o) -> c.deleteNamespace(o.getMetadata().getName()));
        SharedIndexInformer<Pod> pods = informer(
                client.pods().inAnyNamespace().runnableInformer(resyncMillis),
                "pod",
                PolicyCalculator::upsertPod,
                (c, o) -> c.deletePod(
                        o.getMetadata().getNamespace(), o.getMetadata().getName()));
        podInformer = pods;
        SharedIndexInformer<NetworkPolicy> pols = informer(
                client.network().v1().networkPolicies().inAnyNamespace().runnableInformer(resyncMillis),
                "networkpolicy",
                PolicyCalculator::upsertPolicy,
                (c, o) -> c.deletePolicy(
                        o.getMetadata().getNamespace(), o.getMetadata().getName()));
        SharedIndexInformer<Node> nodes = informer(
                client.nodes().runnableInformer(resyncMillis),
                "node",
                PolicyCalculator::upsertNode,
                (c, o) -> c.deleteNode(o.getMetadata().getName()));
        CompletableFuture<?>[] started = List.of(ns, pods, pols, nodes).stream()
                .map(i -> i.start().toCompletableFuture())
                .toArray(CompletableFuture[]::new);
        CompletableFuture.allOf(started).exceptionally(e -> {
            if (!closed) {
                log.error("informers failed to start", e);
            }
            return null;
        });
        CompletableFuture<Void> admin = adminApis.start();
        return CompletableFuture.allOf(coreListed, admin).thenRun(() -> {
            log.info(
                    "informers synced: {} namespaces, {} pods, {} network policies, {} nodes",
                    ns.getStore().list().size(),
                    pods.getStore().list().size(),
                    pols.getStore().list().size(),
                    nodes.getStore().list().size());
            sink.sourceSynced(NAME);
        });
    }

    /** The pod as the informer has it now (null before start, or when there is none). */
    public Pod pod(String namespace, String name) {
        SharedIndexInformer<Pod> pods = podInformer;
        return pods == null ? null : pods.getStore().getByKey(namespace + "/" + name);
    }

    private <T extends HasMetadata> SharedIndexInformer<T> informer(
            SharedIndexInformer<T> informer,
            String kind,
            BiConsumer<PolicyCalculator, T> upsert,
            BiConsumer<PolicyCalculator, T> delete) {
        informers.add(InformerEvents.wire(informer, sink, kind, upsert, delete, () -> {
            if (listedInformers.incrementAndGet() == CORE_INFORMERS) {
                coreListed.complete(null);
            }
        }));
        byKind.put(kind, informer);
        return informer;
    }

    /** The started informers by kind (namespace, pod, networkpolicy, node), for health metrics. */
    public Map<String, SharedIndexInformer<?>> informers() {
        return Map.copyOf(byKind);
    }

    @Override
    public void close() {
        closed = true;
        adminApis.close();
        informers.forEach(SharedIndexInformer::stop);
    }
}
