// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubeverdict.controlplane.source.KubernetesSource;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What the control plane writes to the API from its enforcement receipts, each on a thread of its
 * own so that the calculation never waits: the {@code Enforced} condition on the admin-tier
 * policies and Events on NetworkPolicies (only by the holder of the writer Lease, when there is
 * one), and the pod readiness gate (by every replica, for the nodes whose agents report to it).
 */
public final class ReceiptWriting implements AutoCloseable {

    /**
     * @param lease null: no election, this process is the only writer (one replica, tests)
     * @param stallThreshold how long a NetworkPolicy may lag before a PolicyNotEnforced Event
     */
    public record Settings(
            boolean conditions,
            boolean events,
            boolean readinessGates,
            WriterLease.Settings lease,
            Duration stallThreshold) {
        /** Conditions only, no Lease (the single-writer tests). */
        public static Settings conditionsOnly() {
            return new Settings(true, false, false, null, Duration.ofSeconds(60));
        }
    }

    /** What the writers read: the receipts, the snapshots, which agents report here, the pods. */
    record Sources(
            ReplicatedReceipts receipts,
            SnapshotHub hub,
            Supplier<Set<String>> reporting,
            BiFunction<String, String, Pod> pods,
            LongSupplier unixNanos) {}

    private final Deque<AutoCloseable> parts = new ArrayDeque<>();
    private WriterLease lease;

    private ReceiptWriting() {}

    /**
     * @param pods null: no pod is known (a readiness gate is never set)
     * @param unixNanos the receipts' clock
     */
    public static ReceiptWriting start(
            KubernetesClient client,
            Settings settings,
            ReplicatedReceipts receipts,
            SnapshotHub hub,
            PolicySyncService sync,
            KubernetesSource pods,
            LongSupplier unixNanos) {
        return start(
                client,
                settings,
                new Sources(
                        receipts,
                        hub,
                        sync::connectedNodes,
                        (ns, name) -> pods == null ? null : pods.pod(ns, name),
                        unixNanos));
    }

    static ReceiptWriting start(KubernetesClient client, Settings settings, Sources from) {
        ReceiptWriting w = new ReceiptWriting();
        BooleanSupplier writer = () -> true;
        PeerReceipts whenNotAsked = PeerReceipts.ALONE;
        if (settings.lease() != null && (settings.conditions() || settings.events())) {
            w.lease = new WriterLease(client, settings.lease()).start();
            w.parts.push(w.lease);
            writer = w.lease::holder;
            whenNotAsked = PeerReceipts.NOT_ASKED; // several replicas: unless asked, the others' nodes are unknown
        }
        if (settings.conditions()) {
            w.parts.push(new StatusConditionWriter(client, from.receipts(), writer, whenNotAsked).start());
        }
        if (settings.events()) {
            w.parts.push(new EnforcementEventWriter(
                            client, from.receipts(), settings.stallThreshold(), writer, whenNotAsked, from.unixNanos())
                    .start());
        }
        if (settings.readinessGates()) {
            w.parts.push(
                    new PodReadinessGates(client, from.hub(), from.receipts().local(), from.reporting(), from.pods())
                            .start());
        }
        return w;
    }

    /** Whether this replica writes conditions and Events now. */
    public boolean writer() {
        return lease == null || lease.holder();
    }

    @Override
    public void close() {
        while (!parts.isEmpty()) {
            try {
                parts.pop().close();
            } catch (Exception ignored) {
                // Closing a writer stops its thread; nothing to report.
            }
        }
    }
}
