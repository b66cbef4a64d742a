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

/**
 * The calculation: cluster objects (namespaces, pods, NetworkPolicies, the admin-tier policies,
 * nodes) in, per-node snapshots out. Pure and single-threaded (the
 * sources funnel every event onto one thread); no I/O, no clock. Upserts replace an object by
 * namespace/name; the same final set of objects gives the same snapshots whatever the order.
 */
public interface PolicyCalculator {
    void upsertNamespace(Namespace namespace);

    void deleteNamespace(String name);

    void upsertPod(Pod pod);

    void deletePod(String namespace, String name);

    void upsertPolicy(NetworkPolicy policy);

    void deletePolicy(String namespace, String name);

    /**
     * An AdminNetworkPolicy, BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1) or
     * ClusterNetworkPolicy (v1alpha2), by kind and name; see {@link AdminPolicyKind}.
     *
     * @throws IllegalArgumentException for an object of another kind or version, or without a name
     */
    void upsertAdminPolicy(GenericKubernetesResource policy);

    void deleteAdminPolicy(AdminPolicyKind kind, String name);

    /**
     * A cluster Node: its labels and addresses are what admin-tier {@code nodes} peers match; its
     * spec.podCIDRs go into its own snapshot (pod_cidrs).
     */
    void upsertNode(Node node);

    void deleteNode(String name);

    /**
     * The nodes of the cluster: every Node object and every node a pod is placed on. The same
     * immutable instance is returned until the set changes (a cheap test for the caller).
     */
    Set<String> clusterNodes();

    /** Nodes that have at least one endpoint (pods with spec.nodeName). */
    Set<String> nodes();

    /** The current snapshot of a node; an empty snapshot for a node without endpoints. */
    NodeSnapshot snapshot(String node);

    /** Nodes whose snapshot may have changed since the last call; clears the record. */
    Set<String> drainChangedNodes();

    /**
     * What changed since the last drain, with shared sets apart: the nodes whose own parts may
     * have changed (endpoints, policies, the list of their sets, pod ranges); every live set whose
     * members changed, as its new content and the net members added and removed since the
     * previous drain reported it (sorted by id); and the ids of sets dropped (no policy uses them;
     * a set of the same id may be new since, and then is among the changed). A node not in {@link
     * Changes#nodes} has as current snapshot its previous one with each changed set it lists
     * replaced by the new content, so a change of a set that every node uses costs no work per
     * node here, and none in the size of the set. Clears the record, like {@link
     * #drainChangedNodes} (use one or the other). By default every changed node and no set.
     */
    default Changes drainChanges() {
        return new Changes(drainChangedNodes(), List.of(), Set.of());
    }

    /**
     * The node's snapshot to publish beside {@link #drainChanges}: {@link #snapshot}, except that
     * a set whose current content a drain has reported may be listed with an earlier content
     * (one an earlier snapshot listed), which the reported change supersedes wherever it is
     * published. Only for callers that drain with {@link #drainChanges} and publish every change.
     */
    default NodeSnapshot publishableSnapshot(String node) {
        return snapshot(node);
    }

    /** See {@link #drainChanges}. */
    record Changes(Set<String> nodes, List<SetChange> sets, Set<String> droppedSets) {}

    /** Policies (or parts of them) that could not be used, with why; they never widen access. */
    List<PolicyProblem> problems();

    /**
     * Addresses that more than one live pod claims, each with its claimants ("namespace/name"):
     * such an address is given to none of them (no endpoint has it, no set holds it).
     */
    default Map<String, List<String>> addressConflicts() {
        return Map.of();
    }

    /**
     * Pod addresses left out because they lie outside their node's pod ranges and are not the
     * node's own ({@link RefusedAddress}), sorted by pod and address.
     */
    default List<RefusedAddress> refusedAddresses() {
        return List.of();
    }

    /** What IP sets mean, in words (their definition), by id; unknown ids are left out. */
    default Map<String, String> describeIpSets(Collection<String> ids) {
        return Map.of();
    }

    /** The policy objects as last applied (none kept: an empty store nobody writes). */
    default PolicySources policySources() {
        return new PolicySources();
    }
}
