// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The calculation's indexes, kept up to date on every event:
 * <ul>
 *   <li>per namespace ({@link NamespaceState}, in {@link Namespaces}): its pods, its policies, the
 *       IP sets in its scope and the policy selections covering it;</li>
 *   <li>per distinct selector ({@link Selection}: a NetworkPolicy's pod selector in its namespace,
 *       an admin-tier subject), shared by the policies ({@link PolicyState}) that have it: the
 *       endpoint pods it selects and how many per node;</li>
 *   <li>per pod: the policies selecting it, one interned list per distinct combination
 *       ({@link Selections}); per node: its endpoints;</li>
 *   <li>pods as reported and the addresses the calculation may use ({@link ReportedPods});</li>
 *   <li>per cluster Node: labels and addresses, for the node-address sets of {@code nodes} peers,
 *       and its pod ranges, which its own snapshot carries ({@link ClusterNodes});</li>
 *   <li>per IP set ({@link MemberSet}: pod sets {@link IpSetState}, node sets
 *       {@link NodeSetState}): members and users, both reference counted ({@link SetReferences});</li>
 *   <li>which admin-tier policies of equal priority select a common pod ({@link PriorityOverlaps},
 *       kept by {@link Selections}).</li>
 * </ul>
 * This class coordinates them: an event goes to each part it concerns, in an order that keeps
 * shared state alive. Every change that can make a snapshot stale is reported to the
 * {@link IndexChanges} listener. Builds no protos (except each policy's own, at compile):
 * snapshots are assembled elsewhere.
 */
final class ClusterIndex {

    private final Namespaces namespaces = new Namespaces(this::coverNewNamespace);
    /** What a policy's new sets and selection over one scope are filled from; forgotten when the index is read. */
    private final ScopePods scopePods = new ScopePods(namespaces);
    /** Pods as the calculation sees them (contested addresses removed), by "namespace/name". */
    private final Map<String, PodModel> pods = new HashMap<>();

    private final ClusterNodes clusterNodes = new ClusterNodes();
    private final SharedNames names = new SharedNames();
    private final ReportedPods reportedPods = new ReportedPods(clusterNodes);
    private final Map<String, PolicyState> policies = new HashMap<>();
    private final Selections selections = new Selections(policies, namespaces, scopePods);
    private final SetReferences sets = new SetReferences(namespaces, clusterNodes, scopePods);
    /** Node -> its endpoint pods by key. */
    private final Map<String, TreeMap<String, PodModel>> nodes = new HashMap<>();

    private final StagedReplacements replacements = new StagedReplacements();
    /** Admin-tier policies (cluster-scoped), also in {@link #policies}. */
    private final AdminTierPolicies admin =
            new AdminTierPolicies(policies, sets, selections, this::stagedAdded, this::stagedRemoved);

    private IndexChanges changes;
    /** Counts policy events (any kind): what is derived from policies alone is valid while it stands. */
    private long policyChanges;

    /** Where changes are reported; set once, before the first event. */
    void reportChangesTo(IndexChanges listener) {
        if (changes != null) {
            throw new IllegalStateException("changes are already reported elsewhere");
        }
        changes = listener;
        sets.reportChangesTo(listener);
        selections.reportChangesTo(listener);
    }

    /**
     * Brings what policy events left pending (their pods' combinations) up to date and reported;
     * before anything is read from the index.
     */
    void settle() {
        selections.settle();
        scopePods.forget();
    }

    // ---- what the snapshots are assembled from

    /** Nodes that have at least one endpoint. */
    Set<String> nodes() {
        return nodes.keySet();
    }

    /**
     * The nodes the cluster has: every Node object and every node a pod is placed on (a pod's
     * spec.nodeName names a node even where Node objects are not given, as in a manifest
     * directory). The same immutable instance until the set changes.
     */
    Set<String> clusterNodes() {
        return clusterNodes.names();
    }

    /** A node's endpoint pods in key order, or null when it has none. */
    Collection<PodModel> endpointsOn(String node) {
        TreeMap<String, PodModel> endpoints = nodes.get(node);
        return endpoints == null ? null : endpoints.values();
    }

    /** A node's pod ranges (its Node's spec.podCIDRs), empty when it has no Node object or none. */
    List<String> podCidrsOf(String node) {
        return clusterNodes.podCidrsOf(node);
    }

    /**
     * The keys of the policies selecting a pod, in key order (an immutable list, one instance for
     * every pod with the same policies), or null when none does.
     */
    List<String> policiesSelecting(String podKey) {
        return selections.of(podKey);
    }

    /** A count of policy events (upserts and deletes of every kind): unchanged, no policy changed. */
    long policyChanges() {
        return policyChanges;
    }

    /** Distinct combinations of selecting policies pods hold. */
    int selectionCombinations() {
        return selections.combinations();
    }

    /** Pods the selections keep an entry for. */
    int selectedPods() {
        return selections.selectedPods();
    }

    PolicyState policy(String key) {
        return policies.get(key);
    }

    /** Whether a staged policy replaces the live policy of this key in the would-be tiers. */
    boolean replacedWhenStaged(String liveKey) {
        return replacements.replaced(liveKey);
    }

    private void stagedAdded(PolicyState p) {
        replacedChanged(replacements.added(p));
    }

    private void stagedRemoved(PolicyState p) {
        replacedChanged(replacements.removed(p));
    }

    /** The endpoints of a live policy whose replacement came or went have other would-be tiers. */
    private void replacedChanged(String liveKey) {
        PolicyState live = liveKey == null ? null : policies.get(liveKey);
        // No selection yet: the live version is being added, and joining its selection reports its pods.
        if (live == null || live.selection == null || changes == null) {
            return;
        }
        for (SelectedPod entry : live.selection.entries()) {
            changes.endpointChanged(entry.pod.key());
        }
        for (String node : live.selection.nodes()) {
            changes.nodeChanged(node);
        }
    }

    /**
     * What every policy's compilation could not use, and the admin-tier policies whose equal
     * priorities overlap; by kind, namespace, name and field.
     */
    List<PolicyProblem> problems() {
        List<PolicyProblem> out = new ArrayList<>();
        for (PolicyState p : policies.values()) {
            out.addAll(p.problems());
        }
        out.addAll(selections.overlapProblems());
        out.sort(Comparator.comparing(PolicyProblem::kind)
                .thenComparing(PolicyProblem::namespace)
                .thenComparing(PolicyProblem::name)
                .thenComparing(PolicyProblem::field)
                .thenComparing(PolicyProblem::message));
        return out;
    }

    /** The canonical definition of each alive IP set among {@code ids}, by id (for inspection). */
    Map<String, String> describeIpSets(Collection<String> ids) {
        return sets.describe(ids);
    }

    /** Number of distinct IP sets alive (pod and node sets). */
    int ipSetCount() {
        return sets.count();
    }

    /** Addresses more than one live pod claims, with the pods: given to none of them. */
    Map<String, List<String>> addressConflicts() {
        return reportedPods.addressConflicts();
    }

    /** Endpoint pods' addresses outside their node's pod ranges and not its own: given to nobody. */
    List<RefusedAddress> refusedAddresses() {
        return reportedPods.refusedAddresses();
    }

    // ---- namespaces

    void upsertNamespace(Namespace namespace) {
        String name = namespace.getMetadata().getName();
        NamespaceState st = namespaces.getOrCreate(name);
        st.declared = true;
        setNamespaceLabels(st, Labels.namespace(name, namespace.getMetadata().getLabels()));
    }

    void deleteNamespace(String name) {
        NamespaceState st = namespaces.get(name);
        if (st == null || !st.declared) {
            return;
        }
        // Pods of a deleted namespace go away through their own events; until then the
        // namespace is seen as the API server would show it: only its name label.
        st.declared = false;
        setNamespaceLabels(st, Labels.namespace(name, Map.of()));
        namespaces.dropIfUnused(st);
    }

    /** A namespace new to the index joins the sets and admin-tier policies whose selectors match it. */
    private void coverNewNamespace(NamespaceState st) {
        sets.coverNew(st);
        selections.coverNew(st);
    }

    private void setNamespaceLabels(NamespaceState st, Map<String, String> labels) {
        if (labels.equals(st.labels)) {
            return;
        }
        namespaces.relabel(st, labels);
        selections.namespaceRelabelled(st);
        sets.namespaceRelabelled(st);
    }

    // ---- pods

    void upsertPod(Pod pod) {
        PodModel reported = PodModel.of(pod, names::of);
        reportedPods.report(reported);
        judgeAddresses(reported.key());
    }

    /**
     * Claims the addresses the pod's node may give it (its Node as known now) and applies the pod;
     * again whenever that Node changes, so the outcome does not depend on which came first.
     */
    private void judgeAddresses(String key) {
        Set<String> affected = reportedPods.judge(key);
        applyEffective(key);
        affected.forEach(this::applyEffective);
    }

    void deletePod(String namespace, String name) {
        String key = namespace + "/" + name;
        Set<String> affected = reportedPods.forget(key);
        if (affected == null) {
            return;
        }
        PodModel old = pods.remove(key);
        if (old != null) {
            applyPod(old, null);
        }
        affected.forEach(this::applyEffective);
    }

    /**
     * Applies the pod as the calculation sees it: without the addresses its node may not give it,
     * and without those another live pod claims too.
     */
    private void applyEffective(String key) {
        PodModel model = reportedPods.effective(key);
        PodModel old = pods.put(key, model);
        if (!model.equals(old)) {
            applyPod(old, model);
        }
    }

    private void applyPod(PodModel old, PodModel pod) {
        PodModel any = pod != null ? pod : old;
        String key = any.key();
        changes.endpointChanged(key);
        NamespaceState st = namespaces.getOrCreate(any.namespace());
        namespaces.putPod(st, any.name(), pod);
        clusterNodes.moved(old == null ? null : old.node(), pod == null ? null : pod.node());
        sets.podChanged(st, old, pod);
        selections.podChanged(st, old, pod);
        if (old != null && old.endpoint()) {
            TreeMap<String, PodModel> endpoints = nodes.get(old.node());
            endpoints.remove(key);
            changes.nodeChanged(old.node());
            if (endpoints.isEmpty()) {
                nodes.remove(old.node());
            }
        }
        if (pod != null && pod.endpoint()) {
            nodes.computeIfAbsent(pod.node(), n -> new TreeMap<>()).put(key, pod);
            changes.nodeChanged(pod.node());
        }
        namespaces.dropIfUnused(st);
    }

    // ---- policies

    void upsertPolicy(NetworkPolicy policy) {
        policyChanges++;
        applyPolicy(policy);
    }

    private void applyPolicy(NetworkPolicy policy) {
        CompiledPolicy compiled = PolicyCompiler.compile(policy);
        ObjectMeta meta = policy.getMetadata();
        Staging staging = Staging.of(meta, compiled.key(), n -> compiled.namespace() + "/" + n);
        String annotationProblem = Staging.problem(meta);
        List<PolicyProblem> stagingProblems = annotationProblem == null
                ? List.of()
                : List.of(new PolicyProblem(
                        compiled.namespace(), compiled.name(), "metadata.annotations", annotationProblem));
        String key = staging == null ? compiled.key() : staging.key();
        PolicyState old = policies.get(key);
        if (old != null
                && old.compiled.equals(compiled)
                && Objects.equals(old.staging, staging)
                && old.stagingProblems.equals(stagingProblems)) {
            return;
        }
        NamespaceState st = namespaces.getOrCreate(compiled.namespace());
        PolicyState p = new PolicyState(compiled, staging, stagingProblems);
        // Take the new references before dropping the old ones, so shared sets survive.
        for (IpSetDef def : compiled.ipSets()) {
            p.sets.add(sets.acquire(def, p));
        }
        // Register the new version before removing the old one: removal may otherwise find the
        // namespace unused and drop its state.
        policies.put(p.key, p);
        st.policies.add(p);
        if (old != null) {
            removePolicy(old, st);
        }
        // One object is live or staged: its other form (before the annotation changed) goes.
        PolicyState otherForm = policies.remove(staging == null ? Staging.PREFIX + compiled.key() : compiled.key());
        if (otherForm != null) {
            removePolicy(otherForm, st);
        }
        selections.acquire(p, IpSetDef.pods(compiled.namespace(), compiled.podSelector()));
        stagedAdded(p);
    }

    void deletePolicy(String namespace, String name) {
        policyChanges++;
        for (String key : List.of(namespace + "/" + name, Staging.PREFIX + namespace + "/" + name)) {
            PolicyState old = policies.remove(key);
            if (old != null) {
                NamespaceState st = namespaces.get(namespace);
                removePolicy(old, st);
                namespaces.dropIfUnused(st);
            }
        }
    }

    private void removePolicy(PolicyState old, NamespaceState st) {
        stagedRemoved(old);
        st.policies.remove(old);
        selections.release(old);
        for (MemberSet set : old.sets) {
            sets.release(set, old);
        }
    }

    // ---- admin-tier policies (cluster-scoped)

    void upsertAdminPolicy(AdminPolicy policy) {
        upsertAdminPolicy(policy, null);
    }

    /** An admin-tier policy; its metadata says whether it is staged (null: live). */
    void upsertAdminPolicy(AdminPolicy policy, ObjectMeta meta) {
        policyChanges++;
        admin.upsert(policy, meta);
    }

    void deleteAdminPolicy(AdminPolicyKind kind, String name) {
        policyChanges++;
        admin.delete(kind, name);
    }

    // ---- cluster nodes (for node-address sets)

    void upsertNode(Node node) {
        NodeModel model = NodeModel.of(node);
        NodeModel old = clusterNodes.put(model);
        if (!model.equals(old)) {
            applyNode(old, model);
            judgePodsOn(old, model);
        }
    }

    void deleteNode(String name) {
        NodeModel old = clusterNodes.remove(name);
        if (old != null) {
            applyNode(old, null);
            judgePodsOn(old, null);
        }
    }

    /** When what a node may give its pods changed (ranges, own addresses), judges their addresses again. */
    private void judgePodsOn(NodeModel old, NodeModel node) {
        boolean sameScope = old != null
                && node != null
                && old.podCidrs().equals(node.podCidrs())
                && old.addresses().equals(node.addresses());
        boolean noScope = (old == null || old.podCidrs().isEmpty())
                && (node == null || node.podCidrs().isEmpty());
        List<String> keys = reportedPods.placedOn(node != null ? node.name() : old.name());
        if (sameScope || noScope || keys == null) {
            return;
        }
        for (String key : keys) {
            judgeAddresses(key);
        }
    }

    private void applyNode(NodeModel old, NodeModel node) {
        List<String> podCidrsBefore = old == null ? List.of() : old.podCidrs();
        List<String> podCidrsAfter = node == null ? List.of() : node.podCidrs();
        if (!podCidrsBefore.equals(podCidrsAfter)) {
            changes.nodeChanged(node != null ? node.name() : old.name()); // its own snapshot carries them
        }
        sets.nodeChanged(old, node);
    }
}
