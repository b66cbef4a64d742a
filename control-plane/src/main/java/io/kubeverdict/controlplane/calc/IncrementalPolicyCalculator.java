// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The policy calculation (NetworkPolicy and the admin tiers), incremental, in two parts with one
 * job each: the {@link ClusterIndex} keeps namespaces, pods, nodes, policies, their selections and
 * the reference counted IP sets up to date on every event (what policies joining or leaving a
 * selection do to its pods' combinations waits until something is read: {@link ClusterIndex#settle})
 * and reports what changed; {@link NodeSnapshots}
 * assembles node snapshots from it lazily, from cached per-endpoint, per-set and per-node parts,
 * and knows which nodes changed.
 */
public final class IncrementalPolicyCalculator implements PolicyCalculator {

    private final ClusterIndex index = new ClusterIndex();
    private final NodeSnapshots snapshots = new NodeSnapshots(index);
    private final PolicySources sources = new PolicySources();

    @Override
    public void upsertNamespace(Namespace namespace) {
        index.upsertNamespace(namespace);
    }

    @Override
    public void deleteNamespace(String name) {
        index.deleteNamespace(name);
    }

    @Override
    public void upsertPod(Pod pod) {
        index.upsertPod(pod);
    }

    @Override
    public void deletePod(String namespace, String name) {
        index.deletePod(namespace, name);
    }

    @Override
    public void upsertPolicy(NetworkPolicy policy) {
        index.upsertPolicy(policy);
        String namespace = policy.getMetadata().getNamespace();
        // The compiler's key: a NetworkPolicy without a namespace is in "default".
        sources.applied(
                (namespace == null ? "default" : namespace) + "/"
                        + policy.getMetadata().getName(),
                policy);
    }

    @Override
    public void deletePolicy(String namespace, String name) {
        index.deletePolicy(namespace, name);
        sources.deleted(namespace + "/" + name);
    }

    @Override
    public void upsertAdminPolicy(GenericKubernetesResource policy) {
        AdminPolicy read = AdminPolicyReader.read(policy);
        index.upsertAdminPolicy(read, policy.getMetadata());
        sources.applied(read.key(), policy);
    }

    @Override
    public void deleteAdminPolicy(AdminPolicyKind kind, String name) {
        index.deleteAdminPolicy(kind, name);
        sources.deleted(AdminPolicy.key(kind, name));
    }

    @Override
    public void upsertNode(Node node) {
        index.upsertNode(node);
    }

    @Override
    public void deleteNode(String name) {
        index.deleteNode(name);
    }

    @Override
    public Set<String> clusterNodes() {
        return index.clusterNodes();
    }

    @Override
    public Set<String> nodes() {
        return new TreeSet<>(index.nodes());
    }

    @Override
    public NodeSnapshot snapshot(String node) {
        index.settle();
        return snapshots.snapshot(node);
    }

    @Override
    public NodeSnapshot publishableSnapshot(String node) {
        index.settle();
        return snapshots.publishableSnapshot(node);
    }

    @Override
    public Set<String> drainChangedNodes() {
        index.settle();
        return snapshots.drainChangedNodes();
    }

    @Override
    public Changes drainChanges() {
        index.settle();
        return snapshots.drainChanges();
    }

    @Override
    public List<PolicyProblem> problems() {
        index.settle();
        return index.problems();
    }

    @Override
    public Map<String, List<String>> addressConflicts() {
        return index.addressConflicts();
    }

    @Override
    public List<RefusedAddress> refusedAddresses() {
        return index.refusedAddresses();
    }

    @Override
    public PolicySources policySources() {
        return sources;
    }

    @Override
    public Map<String, String> describeIpSets(Collection<String> ids) {
        return index.describeIpSets(ids);
    }

    /** The keys of the policies selecting a pod, in key order, or null when none does (for tests). */
    List<String> policiesSelecting(String podKey) {
        index.settle();
        return index.policiesSelecting(podKey);
    }

    /** Distinct combinations of selecting policies the index keeps for its pods (for tests). */
    int selectionCombinations() {
        index.settle();
        return index.selectionCombinations();
    }

    /** Pods the index keeps a selection entry for (for tests: the pods some policy selects). */
    int selectedPods() {
        index.settle();
        return index.selectedPods();
    }

    /** Node assemblies that started from the node's previous parts (tests). */
    int reassemblies() {
        return snapshots.reassemblies();
    }

    /** Node assemblies whose previous parts did not fit the index and were redone from scratch (tests: 0). */
    int partsMismatches() {
        return snapshots.partsMismatches();
    }

    /** Number of distinct IP sets alive (for tests of reference counting and for metrics). */
    public int ipSetCount() {
        return index.ipSetCount();
    }
}
