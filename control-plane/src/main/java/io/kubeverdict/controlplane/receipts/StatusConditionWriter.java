// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the {@code Enforced} condition (status, reason, "enforced on N of M nodes",
 * observedGeneration) into {@code status.conditions} of AdminNetworkPolicies,
 * BaselineAdminNetworkPolicies and ClusterNetworkPolicies through their status subresource, on
 * its own thread: once a second it reads the receipts, asks {@link EnforcedConditions} what is
 * due (only changes; N of M moving alone at most every 30 s; at most {@link #WRITES_PER_SWEEP}
 * writes a second) and writes each by read, replace of the one condition, and a replace of the
 * status with the read resourceVersion (a conflict is retried with backoff, the calculation never
 * waits for any of it). Other conditions on the object are kept, and an object that already
 * carries the same condition is left alone (a replica that takes over the writer Lease rewrites
 * nothing another wrote). It writes only while {@code writer} says so (the Lease holder); lagging
 * nodes that may report to a replica not heard from make a condition Unknown rather than False.
 */
public final class StatusConditionWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatusConditionWriter.class);
    static final int WRITES_PER_SWEEP = 10;

    private final KubernetesClient client;
    private final ReplicatedReceipts receipts;
    private final EnforcedConditions conditions = new EnforcedConditions();
    private final ScheduledExecutorService thread;
    private final BooleanSupplier writer;
    private final PeerReceipts whenNotAsked;
    private boolean wasWriter; // the sweep thread's

    /**
     * @param writer whether this replica writes now (the Lease holder)
     * @param whenNotAsked what peers say when none is configured: {@link PeerReceipts#NOT_ASKED}
     *     where other replicas may exist, else {@link PeerReceipts#ALONE}
     */
    public StatusConditionWriter(
            KubernetesClient client, ReplicatedReceipts receipts, BooleanSupplier writer, PeerReceipts whenNotAsked) {
        this.client = client;
        this.receipts = receipts;
        this.writer = writer;
        this.whenNotAsked = whenNotAsked;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "status-conditions");
            t.setDaemon(true);
            return t;
        });
    }

    public StatusConditionWriter start() {
        thread.scheduleWithFixedDelay(FatalThreads.guard(this::sweep), 1, 1, TimeUnit.SECONDS);
        return this;
    }

    /** One sweep (the thread's; tests call it directly). */
    void sweep() {
        boolean writing = writer.getAsBoolean();
        if (writing && !wasWriter) {
            conditions.forgetWritten();
        }
        wasWriter = writing;
        if (!writing) {
            return;
        }
        long now = System.nanoTime();
        ReplicatedReceipts.Look look = receipts.all(0, whenNotAsked);
        for (EnforcedConditions.Due d : conditions.due(look.receipts(), look::unknown, now, WRITES_PER_SWEEP)) {
            try {
                if (write(d.ref(), d.condition())) {
                    conditions.written(d.ref(), d.condition(), now);
                }
            } catch (KubernetesClientException e) {
                // 409 (someone wrote meanwhile), 429, an API server away: again after a backoff.
                conditions.failed(d.ref(), now);
                log.debug("writing the Enforced condition of {} failed ({}); retrying", d.ref(), e.getCode(), e);
            }
        }
    }

    /** Writes the condition; false when the object is gone. */
    private boolean write(PolicyRef ref, EnforcedConditions.Condition condition) {
        AdminPolicyKind kind = ref.adminKind();
        ResourceDefinitionContext context = new ResourceDefinitionContext.Builder()
                .withGroup(AdminPolicyKind.GROUP)
                .withVersion(kind.version())
                .withKind(kind.kind())
                .withPlural(kind.plural())
                .withNamespaced(false)
                .build();
        GenericKubernetesResource object =
                client.genericKubernetesResources(context).withName(ref.name()).get();
        if (object == null) {
            return false;
        }
        Map<String, Object> status = new LinkedHashMap<>();
        if (object.getAdditionalProperties().get("status") instanceof Map<?, ?> old) {
            old.forEach((k, v) -> status.put(String.valueOf(k), v));
        }
        List<Object> list = new ArrayList<>();
        String transition = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        if (status.get("conditions") instanceof List<?> old) {
            for (Object c : old) {
                if (c instanceof Map<?, ?> m && EnforcedConditions.TYPE.equals(m.get("type"))) {
                    if (carries(m, condition)) {
                        return true; // already says so (written by this replica or the previous writer)
                    }
                    if (condition.status().equals(m.get("status")) && m.get("lastTransitionTime") != null) {
                        transition = String.valueOf(m.get("lastTransitionTime"));
                    }
                } else {
                    list.add(c);
                }
            }
        }
        Map<String, Object> enforced = new LinkedHashMap<>();
        enforced.put("type", EnforcedConditions.TYPE);
        enforced.put("status", condition.status());
        enforced.put("reason", condition.reason());
        enforced.put("message", condition.message());
        enforced.put("observedGeneration", condition.observedGeneration());
        enforced.put("lastTransitionTime", transition);
        list.add(enforced);
        status.put("conditions", list);
        object.setAdditionalProperty("status", status);
        client.genericKubernetesResources(context).resource(object).replaceStatus();
        return true;
    }

    private static boolean carries(Map<?, ?> m, EnforcedConditions.Condition c) {
        return c.status().equals(m.get("status"))
                && c.reason().equals(m.get("reason"))
                && c.message().equals(m.get("message"))
                && m.get("observedGeneration") instanceof Number g
                && g.longValue() == c.observedGeneration();
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
