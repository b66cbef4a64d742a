// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.calc.PolicySources;
import io.kubeverdict.controlplane.calc.RefusedAddress;
import io.kubeverdict.controlplane.calc.Staging;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The calculation, telling {@link PolicyReceipts} each policy write and delete once the calculator
 * has applied it (a write that throws is retried by the loop and told then). Everything else passes
 * through unchanged; the calculator itself knows nothing of generations.
 */
public final class ReceiptingCalculator implements PolicyCalculator {
    private final PolicyCalculator calculator;
    private final PolicyReceipts receipts;
    private final LongSupplier seenUnixNanos;

    /** @param seenUnixNanos when the change being applied was seen (the loop's stamp of it) */
    public ReceiptingCalculator(PolicyCalculator calculator, PolicyReceipts receipts, LongSupplier seenUnixNanos) {
        this.calculator = calculator;
        this.receipts = receipts;
        this.seenUnixNanos = seenUnixNanos;
    }

    @Override
    public void upsertPolicy(NetworkPolicy policy) {
        calculator.upsertPolicy(policy);
        ObjectMeta m = policy.getMetadata();
        written(PolicyRef.networkPolicy(m.getNamespace(), m.getName()), policy);
    }

    @Override
    public void deletePolicy(String namespace, String name) {
        calculator.deletePolicy(namespace, name);
        receipts.deleted(PolicyRef.networkPolicy(namespace, name));
    }

    @Override
    public void upsertAdminPolicy(GenericKubernetesResource policy) {
        calculator.upsertAdminPolicy(policy); // throws for objects of other kinds
        AdminPolicyKind kind = AdminPolicyKind.of(policy.getApiVersion(), policy.getKind());
        written(PolicyRef.admin(kind, policy.getMetadata().getName()), policy);
    }

    @Override
    public void deleteAdminPolicy(AdminPolicyKind kind, String name) {
        calculator.deleteAdminPolicy(kind, name);
        receipts.deleted(PolicyRef.admin(kind, name));
    }

    /** A staged object is enforced nowhere: it has no receipt (`wait` does not take it for enforced). */
    private void written(PolicyRef ref, HasMetadata object) {
        ObjectMeta m = object.getMetadata();
        if (Staging.isStaged(m)) {
            receipts.deleted(ref);
            return;
        }
        long generation = m.getGeneration() == null ? 0 : m.getGeneration();
        String resourceVersion = m.getResourceVersion() == null ? "" : m.getResourceVersion();
        receipts.written(ref, generation, resourceVersion, seenUnixNanos.getAsLong());
    }

    @Override
    public void upsertNamespace(Namespace namespace) {
        calculator.upsertNamespace(namespace);
    }

    @Override
    public void deleteNamespace(String name) {
        calculator.deleteNamespace(name);
    }

    @Override
    public void upsertPod(Pod pod) {
        calculator.upsertPod(pod);
    }

    @Override
    public void deletePod(String namespace, String name) {
        calculator.deletePod(namespace, name);
    }

    @Override
    public void upsertNode(Node node) {
        calculator.upsertNode(node);
    }

    @Override
    public void deleteNode(String name) {
        calculator.deleteNode(name);
    }

    @Override
    public Set<String> clusterNodes() {
        return calculator.clusterNodes();
    }

    @Override
    public Set<String> nodes() {
        return calculator.nodes();
    }

    @Override
    public NodeSnapshot snapshot(String node) {
        return calculator.snapshot(node);
    }

    @Override
    public NodeSnapshot publishableSnapshot(String node) {
        return calculator.publishableSnapshot(node);
    }

    @Override
    public Set<String> drainChangedNodes() {
        return calculator.drainChangedNodes();
    }

    @Override
    public Changes drainChanges() {
        return calculator.drainChanges();
    }

    @Override
    public List<PolicyProblem> problems() {
        return calculator.problems();
    }

    @Override
    public Map<String, List<String>> addressConflicts() {
        return calculator.addressConflicts();
    }

    @Override
    public List<RefusedAddress> refusedAddresses() {
        return calculator.refusedAddresses();
    }

    @Override
    public PolicySources policySources() {
        return calculator.policySources();
    }

    @Override
    public Map<String, String> describeIpSets(Collection<String> ids) {
        return calculator.describeIpSets(ids);
    }
}
