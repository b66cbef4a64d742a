// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kubeverdict.controlplane.sync.IndexedSnapshot;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The opt-in pod readiness gate {@value #CONDITION}: a pod whose spec lists it gets that condition
 * set True (a JSON patch of pods/status adding only that condition, at the informer's
 * resourceVersion) once its node's agent has applied a snapshot
 * that holds the pod as an endpoint with its policies, so Services send it traffic only once its
 * policy holds. Only the replica an agent reports to knows what that node applied, so every
 * replica does this for the nodes whose agents report to it (not only the Lease holder); the
 * condition only ever goes to True, so two replicas cannot contradict each other.
 *
 * <p>Once a second on its own thread: for each node reporting here whose snapshot version moved,
 * each endpoint that is new or changed (a new pod, new addresses, other policies) is required at
 * that version; once the node applied it, the pod is looked up in the informer's cache and
 * written if it lists the gate and does not carry the condition True yet. At most
 * {@link #WRITES_PER_SWEEP} writes a sweep; a patch refused because the pod moved on (422 from the
 * resourceVersion test, or 409) is tried again once the informer holds a newer copy, any other
 * failure (429, API away) stays due and pauses the writes 1 s doubling to 60 s.
 */
public final class PodReadinessGates implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PodReadinessGates.class);
    public static final String CONDITION = "kube-verdict.io/policy-enforced";
    static final int WRITES_PER_SWEEP = 50;
    private static final long MAX_PAUSE_NANOS = 60_000_000_000L;

    private final KubernetesClient client;
    private final SnapshotHub hub;
    private final PolicyReceipts receipts;
    private final Supplier<Set<String>> reporting;
    private final BiFunction<String, String, Pod> pods;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "readiness-gates");
        t.setDaemon(true);
        return t;
    });

    private static final class NodeGates {
        long seenVersion = -1;
        List<Endpoint> lastList;
        Map<String, Endpoint> endpoints = Map.of();
        /** namespace/pod -> the snapshot version the node must have applied. */
        final Map<String, Long> pending = new HashMap<>();
        /** namespace/pod -> the resourceVersion of the cached copy whose patch the API server refused. */
        final Map<String, String> refused = new HashMap<>();
    }

    // The sweep thread's.
    private final Map<String, NodeGates> nodes = new HashMap<>();
    private int failures;
    private long pausedUntilNanos;

    /**
     * @param reporting the nodes whose agents report to this replica
     * @param pods the pod (namespace, name) as the informer has it now, or null
     */
    public PodReadinessGates(
            KubernetesClient client,
            SnapshotHub hub,
            PolicyReceipts receipts,
            Supplier<Set<String>> reporting,
            BiFunction<String, String, Pod> pods) {
        this.client = client;
        this.hub = hub;
        this.receipts = receipts;
        this.reporting = reporting;
        this.pods = pods;
    }

    public PodReadinessGates start() {
        thread.scheduleWithFixedDelay(FatalThreads.guard(this::sweep), 1, 1, TimeUnit.SECONDS);
        return this;
    }

    /** One sweep (the thread's; tests call it directly). */
    void sweep() {
        Set<String> here = reporting.get();
        nodes.keySet().retainAll(here);
        for (String node : here) {
            NodeGates g = nodes.computeIfAbsent(node, n -> new NodeGates());
            IndexedSnapshot s = hub.current(node);
            if (s.version() != g.seenVersion) {
                track(g, s);
            }
        }
        if (System.nanoTime() - pausedUntilNanos < 0) {
            return;
        }
        int budget = WRITES_PER_SWEEP;
        for (Map.Entry<String, NodeGates> e : nodes.entrySet()) {
            long applied = receipts.appliedVersion(e.getKey());
            Map<String, String> refused = e.getValue().refused;
            for (Iterator<Map.Entry<String, Long>> it =
                            e.getValue().pending.entrySet().iterator();
                    it.hasNext(); ) {
                Map.Entry<String, Long> p = it.next();
                if (applied < p.getValue()) {
                    continue;
                }
                String[] key = p.getKey().split("/", 2);
                Pod pod = pods.apply(key[0], key[1]);
                if (pod == null || !gated(pod) || conditionTrue(pod)) {
                    it.remove();
                    refused.remove(p.getKey());
                    continue;
                }
                String version = pod.getMetadata().getResourceVersion();
                if (version == null) {
                    continue; // nothing to guard the patch with (an informer's copy always has one)
                }
                if (version.equals(refused.get(p.getKey()))) {
                    continue; // refused at this version: again once the informer has a newer copy
                }
                if (budget-- <= 0) {
                    return;
                }
                try {
                    write(pod);
                    it.remove();
                    refused.remove(p.getKey());
                    failures = 0;
                } catch (KubernetesClientException ex) {
                    if (ex.getCode() == 409 || ex.getCode() == 422) {
                        // The pod changed since the informer's copy (the patch's resourceVersion test
                        // failed), or the patch is invalid for this pod: not retried at this version.
                        refused.put(p.getKey(), version);
                        log.debug(
                                "{} on pod {} refused at resourceVersion {}: {}",
                                CONDITION,
                                p.getKey(),
                                version,
                                ex.toString());
                        continue;
                    }
                    failures++;
                    long pause = Math.min(MAX_PAUSE_NANOS, 1_000_000_000L << Math.min(failures - 1, 6));
                    pausedUntilNanos = System.nanoTime() + pause;
                    if (failures == 1) { // once per streak: a missing RBAC rule or an API away shows
                        log.warn(
                                "setting {} on pod {} failed ({}); retrying with backoff",
                                CONDITION,
                                p.getKey(),
                                ex.toString());
                    }
                    return;
                }
            }
        }
    }

    /** Endpoints new or changed since the node's last seen snapshot are required at its version. */
    private static void track(NodeGates g, IndexedSnapshot s) {
        List<Endpoint> list = s.snapshot().getEndpointsList();
        if (list != g.lastList) {
            Map<String, Endpoint> now = new HashMap<>(list.size() * 4 / 3 + 1);
            for (Endpoint ep : list) {
                String key = ep.getId().getNamespace() + "/" + ep.getId().getPod();
                now.put(key, ep);
                if (!ep.equals(g.endpoints.get(key))) {
                    g.pending.put(key, s.version());
                }
            }
            g.pending.keySet().retainAll(now.keySet());
            g.refused.keySet().retainAll(now.keySet());
            g.endpoints = now;
            g.lastList = list;
        }
        g.seenVersion = s.version();
    }

    static boolean gated(Pod pod) {
        if (pod.getSpec() == null || pod.getSpec().getReadinessGates() == null) {
            return false;
        }
        for (PodReadinessGate gate : pod.getSpec().getReadinessGates()) {
            if (CONDITION.equals(gate.getConditionType())) {
                return true;
            }
        }
        return false;
    }

    private static boolean conditionTrue(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return false;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if (CONDITION.equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /**
     * Sets the condition with a JSON patch of pods/status that touches only status.conditions (as
     * the kubelet does with a strategic-merge patch; fabric8's mock API server, which the tests run
     * against, applies only JSON and JSON merge patches, and a merge patch would replace the whole
     * list). The patch first tests the cached resourceVersion, so it applies only to exactly the
     * list the informer showed: a condition the kubelet wrote meanwhile is kept (the test fails with
     * 422, or 409 when the server's own retry meets a newer object) instead of overwritten, and the
     * condition is never appended twice. The informer's copy is partial (ModelSerialization,
     * TrimmingItemStore) and is only read, never written back.
     */
    private void write(Pod cached) {
        Pod named = new PodBuilder() // the request's name only: fabric8 would clone a whole item
                .withNewMetadata()
                .withNamespace(cached.getMetadata().getNamespace())
                .withName(cached.getMetadata().getName())
                .endMetadata()
                .build();
        client.pods()
                .inNamespace(named.getMetadata().getNamespace())
                .resource(named) // without an item fabric8 GETs the pod first (another verb)
                .subresource("status")
                .patch(
                        PatchContext.of(PatchType.JSON),
                        client.getKubernetesSerialization().asJson(patch(cached)));
    }

    /** The JSON patch operations setting {@value #CONDITION} True on this copy of the pod. */
    static List<Map<String, Object>> patch(Pod cached) {
        PodCondition condition = new PodConditionBuilder()
                .withType(CONDITION)
                .withStatus("True")
                .withReason("PolicyEnforced")
                .withMessage("the node's agent applied the pod's policies")
                .withLastTransitionTime(
                        Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
                .build();
        List<Map<String, Object>> ops = new ArrayList<>(2);
        ops.add(Map.of(
                "op",
                "test",
                "path",
                "/metadata/resourceVersion",
                "value",
                cached.getMetadata().getResourceVersion()));
        List<PodCondition> conditions =
                cached.getStatus() == null ? null : cached.getStatus().getConditions();
        if (conditions == null || conditions.isEmpty()) {
            ops.add(Map.of("op", "add", "path", "/status/conditions", "value", List.of(condition)));
            return ops;
        }
        for (int i = 0; i < conditions.size(); i++) {
            if (CONDITION.equals(conditions.get(i).getType())) { // there, not True: replaced in place
                ops.add(Map.of("op", "replace", "path", "/status/conditions/" + i, "value", condition));
                return ops;
            }
        }
        ops.add(Map.of("op", "add", "path", "/status/conditions/-", "value", condition));
        return ops;
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
