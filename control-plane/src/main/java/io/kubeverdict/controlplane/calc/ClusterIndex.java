// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The calculation's indexes, kept up to date on every event:
 * <ul>
 *   <li>per namespace ({@link NamespaceState}): its pods, its policies, the IP sets in its scope
 *       and the admin-tier policies whose subject covers it;</li>
 *   <li>per policy ({@link PolicyState}; NetworkPolicies and the cluster-scoped admin-tier
 *       kinds alike): the endpoint pods it selects and how many per node;</li>
 *   <li>per pod: the policies selecting it; per node: its endpoints;</li>
 *   <li>per cluster Node: labels and addresses, for the node-address sets of {@code nodes} peers,
 *       and its pod ranges, which its own snapshot carries;</li>
 *   <li>per IP set ({@link MemberSet}: pod sets {@link IpSetState}, node sets
 *       {@link NodeSetState}): members and users, both reference counted;</li>
 *   <li>which admin-tier policies of equal priority select a common pod ({@link PriorityOverlaps}).</li>
 * </ul>
 * Every change that can make a snapshot stale is reported to the {@link IndexChanges} listener.
 * Builds no protos (except each policy's own, at compile): snapshots are assembled elsewhere.
 */
final class ClusterIndex {

    private final Map<String, NamespaceState> namespaces = new HashMap<>();
    /** Pods as the calculation sees them (contested addresses removed), by "namespace/name". */
    private final Map<String, PodModel> pods = new HashMap<>();
    /** Pods as reported. */
    private final Map<String, PodModel> reportedPods = new HashMap<>();
    private final AddressClaims claims = new AddressClaims();
    /** Reported pods by the node they are placed on: their addresses are judged again when its Node changes. */
    private final Map<String, Set<String>> reportedOn = new HashMap<>();
    /** Endpoint pods' addresses their node may not give them ({@link PodAddressScope}), by pod key. */
    private final Map<String, List<RefusedAddress>> refused = new TreeMap<>();
    private final Map<String, TreeSet<String>> podPolicies = new HashMap<>();
    private final Map<String, PolicyState> policies = new HashMap<>();
    private final Map<IpSetDef, IpSetState> sets = new HashMap<>();
    private final Set<IpSetState> namespaceSelectorSets = new LinkedHashSet<>();
    /** Node -> its endpoint pods by key. */
    private final Map<String, TreeMap<String, PodModel>> nodes = new HashMap<>();
    /** Admin-tier policies (cluster-scoped), also in {@link #policies}. */
    private final Set<PolicyState> adminPolicies = new LinkedHashSet<>();
    /** Cluster Node objects by name (labels, addresses); unrelated to {@link #nodes}, which is where endpoints run. */
    private final Map<String, NodeModel> clusterNodes = new HashMap<>();
    /** Node name -> how many pods (of any kind, endpoint or not) are placed on it. */
    private final Map<String, Integer> podsPlaced = new HashMap<>();
    /** Node objects and nodes pods are placed on; null when it changed since it was last made. */
    private Set<String> clusterNodeNames = Set.of();
    private final Map<NodeSetDef, NodeSetState> nodeSets = new HashMap<>();
    private final PriorityOverlaps overlaps = new PriorityOverlaps();
    private IndexChanges changes;

    /** Where changes are reported; set once, before the first event. */
    void reportChangesTo(IndexChanges listener) {
        if (changes != null) {
            throw new IllegalStateException("changes are already reported elsewhere");
        }
        changes = listener;
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
        if (clusterNodeNames == null) {
            Set<String> out = new HashSet<>(clusterNodes.keySet());
            out.addAll(podsPlaced.keySet());
            clusterNodeNames = Set.copyOf(out);
        }
        return clusterNodeNames;
    }

    private void placed(String node, int delta) {
        if (node == null) {
            return;
        }
        int n = podsPlaced.getOrDefault(node, 0) + delta;
        if (n <= 0) {
            podsPlaced.remove(node);
        } else {
            podsPlaced.put(node, n);
        }
        if ((delta > 0 && n == 1) || n <= 0) {
            clusterNodeNames = null;
        }
    }

    /** A node's endpoint pods in key order, or null when it has none. */
    Collection<PodModel> endpointsOn(String node) {
        TreeMap<String, PodModel> endpoints = nodes.get(node);
        return endpoints == null ? null : endpoints.values();
    }

    /** A node's pod ranges (its Node's spec.podCIDRs), empty when it has no Node object or none. */
    List<String> podCidrsOf(String node) {
        NodeModel model = clusterNodes.get(node);
        return model == null ? List.of() : model.podCidrs();
    }

    /** The keys of the policies selecting a pod, in key order, or null when none does. */
    TreeSet<String> policiesSelecting(String podKey) {
        return podPolicies.get(podKey);
    }

    PolicyState policy(String key) {
        return policies.get(key);
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
        out.addAll(overlaps.problems(policies::get));
        out.sort(Comparator.comparing(PolicyProblem::kind).thenComparing(PolicyProblem::namespace)
                .thenComparing(PolicyProblem::name).thenComparing(PolicyProblem::field)
                .thenComparing(PolicyProblem::message));
        return out;
    }

    /** The canonical definition of each alive IP set among {@code ids}, by id (for inspection). */
    Map<String, String> describeIpSets(java.util.Collection<String> ids) {
        java.util.Set<String> wanted = new java.util.HashSet<>(ids);
        Map<String, String> out = new java.util.TreeMap<>();
        for (IpSetState set : sets.values()) {
            if (wanted.contains(set.id)) {
                out.put(set.id, set.def.readable());
            }
        }
        for (NodeSetState set : nodeSets.values()) {
            if (wanted.contains(set.id)) {
                out.put(set.id, set.def.readable());
            }
        }
        return out;
    }

    /** Number of distinct IP sets alive (pod and node sets). */
    int ipSetCount() {
        return sets.size() + nodeSets.size();
    }

    // ---- namespaces

    void upsertNamespace(Namespace namespace) {
        String name = namespace.getMetadata().getName();
        NamespaceState st = ns(name);
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
        dropIfUnused(st);
    }

    private NamespaceState ns(String name) {
        NamespaceState st = namespaces.get(name);
        if (st == null) {
            st = new NamespaceState(name);
            namespaces.put(name, st);
            for (IpSetState set : namespaceSelectorSets) {
                if (set.def.namespaceSelector().matches(st.labels)) {
                    st.selectorSets.add(set);
                }
            }
            for (PolicyState p : adminPolicies) {
                if (p.admin.subject().namespaces().matches(st.labels)) {
                    st.adminPolicies.add(p);
                }
            }
        }
        return st;
    }

    private void dropIfUnused(NamespaceState st) {
        if (st.unused()) {
            namespaces.remove(st.name);
        }
    }

    private void setNamespaceLabels(NamespaceState st, Map<String, String> labels) {
        if (labels.equals(st.labels)) {
            return;
        }
        st.labels = labels;
        for (PolicyState p : adminPolicies) {
            boolean was = st.adminPolicies.contains(p);
            boolean now = p.admin.subject().namespaces().matches(labels);
            if (was != now) {
                if (now) {
                    st.adminPolicies.add(p);
                    selectInNamespace(p, st, sharesPriority(p));
                } else {
                    st.adminPolicies.remove(p);
                    unselectInNamespace(p, st);
                }
            }
        }
        for (IpSetState set : namespaceSelectorSets) {
            boolean was = st.selectorSets.contains(set);
            boolean now = set.def.namespaceSelector().matches(labels);
            if (was == now) {
                continue;
            }
            if (now) {
                st.selectorSets.add(set);
            } else {
                st.selectorSets.remove(set);
            }
            for (PodModel pod : st.pods.values()) {
                List<String> c = set.contribution(pod);
                if (!c.isEmpty()) {
                    if (now) {
                        set.addMembers(c);
                    } else {
                        set.removeMembers(c);
                    }
                    changes.membersChanged(set);
                }
            }
        }
    }

    // ---- pods

    void upsertPod(Pod pod) {
        PodModel reported = PodModel.of(pod);
        PodModel before = reportedPods.put(reported.key(), reported);
        String nodeBefore = before == null ? null : before.node();
        if (!java.util.Objects.equals(nodeBefore, reported.node())) {
            unplaceReported(nodeBefore, reported.key());
            if (reported.node() != null) {
                reportedOn.computeIfAbsent(reported.node(), n -> new HashSet<>()).add(reported.key());
            }
        }
        judgeAddresses(reported.key());
    }

    /**
     * Claims the addresses the pod's node may give it (its Node as known now) and applies the pod;
     * again whenever that Node changes, so the outcome does not depend on which came first.
     */
    private void judgeAddresses(String key) {
        PodModel reported = reportedPods.get(key);
        NodeModel node = reported.node() == null ? null : clusterNodes.get(reported.node());
        List<String> refusedNow = reported.endpoint() ? PodAddressScope.refused(node, reported.ips()) : List.of();
        if (refusedNow.isEmpty()) {
            refused.remove(key);
        } else {
            refused.put(key, refusedNow.stream().map(a -> new RefusedAddress(key, reported.node(), a)).toList());
        }
        Set<String> affected = claims.claim(key, reported.endpoint() ? PodAddressScope.admitted(node, reported.ips()) : List.of());
        applyEffective(key);
        affected.forEach(this::applyEffective);
    }

    private void unplaceReported(String node, String key) {
        Set<String> keys = node == null ? null : reportedOn.get(node);
        if (keys != null) {
            keys.remove(key);
            if (keys.isEmpty()) {
                reportedOn.remove(node);
            }
        }
    }

    void deletePod(String namespace, String name) {
        String key = namespace + "/" + name;
        PodModel reported = reportedPods.remove(key);
        if (reported == null) {
            return;
        }
        unplaceReported(reported.node(), key);
        refused.remove(key);
        Set<String> affected = claims.claim(key, List.of());
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
        PodModel reported = reportedPods.get(key);
        NodeModel node = reported.node() == null ? null : clusterNodes.get(reported.node());
        PodModel model = reported.withIps(claims.uncontested(PodAddressScope.admitted(node, reported.ips())));
        PodModel old = pods.put(key, model);
        if (!model.equals(old)) {
            applyPod(old, model);
        }
    }

    /** Addresses more than one live pod claims, with the pods: given to none of them. */
    Map<String, List<String>> addressConflicts() {
        return claims.conflicts();
    }

    /** Endpoint pods' addresses outside their node's pod ranges and not its own: given to nobody. */
    List<RefusedAddress> refusedAddresses() {
        List<RefusedAddress> out = new ArrayList<>();
        refused.values().forEach(out::addAll);
        return out;
    }

    private void applyPod(PodModel old, PodModel pod) {
        PodModel any = pod != null ? pod : old;
        String key = any.key();
        changes.endpointChanged(key);
        NamespaceState st = ns(any.namespace());
        if (pod != null) {
            st.pods.put(pod.name(), pod);
        } else {
            st.pods.remove(old.name());
        }
        String oldNode = old == null ? null : old.node();
        String newNode = pod == null ? null : pod.node();
        if (!java.util.Objects.equals(oldNode, newNode)) {
            placed(oldNode, -1);
            placed(newNode, 1);
        }
        updateSetMembership(st.fixedSets, old, pod);
        updateSetMembership(st.selectorSets, old, pod);

        TreeSet<String> before = podPolicies.getOrDefault(key, new TreeSet<>());
        TreeSet<String> after = new TreeSet<>();
        if (pod != null && pod.endpoint()) {
            for (PolicyState p : st.policies) {
                if (p.compiled.podSelector().matches(pod.labels())) {
                    after.add(p.key);
                }
            }
            for (PolicyState p : st.adminPolicies) {
                if (p.admin.subject().pods().matches(pod.labels())) {
                    after.add(p.key);
                }
            }
        }
        if (!adminPolicies.isEmpty()) {
            overlaps.changed(states(before), states(after));
        }
        if (old != null && old.endpoint()) {
            for (String p : before) {
                unselect(policies.get(p), old);
            }
            TreeMap<String, PodModel> endpoints = nodes.get(old.node());
            endpoints.remove(key);
            changes.nodeChanged(old.node());
            if (endpoints.isEmpty()) {
                nodes.remove(old.node());
            }
        }
        if (pod != null && pod.endpoint()) {
            for (String p : after) {
                select(policies.get(p), pod);
            }
            nodes.computeIfAbsent(pod.node(), n -> new TreeMap<>()).put(key, pod);
            changes.nodeChanged(pod.node());
        }
        if (after.isEmpty()) {
            podPolicies.remove(key);
        } else {
            podPolicies.put(key, after);
        }
        dropIfUnused(st);
    }

    private List<PolicyState> states(Collection<String> keys) {
        List<PolicyState> out = new ArrayList<>(keys.size());
        for (String k : keys) {
            out.add(policies.get(k));
        }
        return out;
    }

    private void updateSetMembership(Set<IpSetState> candidates, PodModel old, PodModel pod) {
        for (IpSetState set : candidates) {
            List<String> before = set.contribution(old);
            List<String> after = set.contribution(pod);
            if (!before.equals(after)) {
                set.removeMembers(before);
                set.addMembers(after);
                changes.membersChanged(set);
            }
        }
    }

    private void select(PolicyState p, PodModel pod) {
        changes.endpointChanged(pod.key());
        p.selected.add(pod.key());
        p.nodeCounts.merge(pod.node(), 1, Integer::sum);
    }

    private void unselect(PolicyState p, PodModel pod) {
        changes.endpointChanged(pod.key());
        p.selected.remove(pod.key());
        p.nodeCounts.computeIfPresent(pod.node(), (k, v) -> v == 1 ? null : v - 1);
    }

    // ---- policies

    void upsertPolicy(NetworkPolicy policy) {
        CompiledPolicy compiled = PolicyCompiler.compile(policy);
        PolicyState old = policies.get(compiled.key());
        if (old != null && old.compiled.equals(compiled)) {
            return;
        }
        NamespaceState st = ns(compiled.namespace());
        PolicyState p = new PolicyState(compiled);
        // Take the new references before dropping the old ones, so shared sets survive.
        for (IpSetDef def : compiled.ipSets()) {
            p.sets.add(acquire(def, p));
        }
        // Register the new version before removing the old one: removal may otherwise find the
        // namespace unused and drop its state.
        policies.put(p.key, p);
        st.policies.add(p);
        if (old != null) {
            removePolicy(old, st);
        }
        for (PodModel pod : st.pods.values()) {
            if (pod.endpoint() && compiled.podSelector().matches(pod.labels())) {
                select(p, pod);
                podPolicies.computeIfAbsent(pod.key(), k -> new TreeSet<>()).add(p.key);
                changes.nodeChanged(pod.node());
            }
        }
    }

    void deletePolicy(String namespace, String name) {
        PolicyState old = policies.remove(namespace + "/" + name);
        if (old != null) {
            NamespaceState st = namespaces.get(namespace);
            removePolicy(old, st);
            dropIfUnused(st);
        }
    }

    private void removePolicy(PolicyState old, NamespaceState st) {
        st.policies.remove(old);
        dropSelections(old, false);
        for (MemberSet set : old.sets) {
            release(set, old);
        }
    }

    /** Every pod a policy version selected no longer is (the version goes away). */
    private void dropSelections(PolicyState old, boolean counted) {
        for (String podKey : old.selected) {
            changes.endpointChanged(podKey);
            TreeSet<String> ps = podPolicies.get(podKey);
            ps.remove(old.key);
            if (counted) {
                overlaps.removed(old, states(ps));
            }
            if (ps.isEmpty()) {
                podPolicies.remove(podKey);
            }
            changes.nodeChanged(pods.get(podKey).node());
        }
    }

    // ---- admin-tier policies (cluster-scoped)

    void upsertAdminPolicy(AdminPolicy policy) {
        CompiledAdminPolicy compiled = AdminPolicyCompiler.compile(policy);
        PolicyState old = policies.get(compiled.key());
        if (old != null && compiled.equals(old.admin)) {
            return;
        }
        PolicyState p = new PolicyState(compiled);
        // New references first, so sets shared with the old version survive.
        for (IpSetDef def : compiled.ipSets()) {
            p.sets.add(acquire(def, p));
        }
        for (NodeSetDef def : compiled.nodeSets()) {
            p.sets.add(acquireNodes(def, p));
        }
        policies.put(p.key, p);
        if (old != null) {
            removeAdminPolicy(old);
        }
        adminPolicies.add(p);
        boolean counted = sharesPriority(p);
        for (NamespaceState st : namespaces.values()) {
            if (compiled.subject().namespaces().matches(st.labels)) {
                st.adminPolicies.add(p);
                selectInNamespace(p, st, counted);
            }
        }
    }

    /**
     * Whether another admin-tier policy of p's tier has p's priority: only then can p be in a
     * pair {@link PriorityOverlaps} counts (the count of a pair is kept by whichever of the two
     * comes second, and dropped by whichever goes first, so skipping is exact).
     */
    private boolean sharesPriority(PolicyState p) {
        for (PolicyState q : adminPolicies) {
            if (q != p && q.admin.tier() == p.admin.tier() && q.admin.priority() == p.admin.priority()) {
                return true;
            }
        }
        return false;
    }

    void deleteAdminPolicy(AdminPolicyKind kind, String name) {
        PolicyState old = policies.remove(AdminPolicy.key(kind, name));
        if (old != null) {
            removeAdminPolicy(old);
        }
    }

    private void removeAdminPolicy(PolicyState old) {
        adminPolicies.remove(old);
        for (NamespaceState st : namespaces.values()) {
            st.adminPolicies.remove(old);
        }
        dropSelections(old, sharesPriority(old));
        for (MemberSet set : old.sets) {
            release(set, old);
        }
    }

    /** An admin-tier policy now covers a namespace: it selects the endpoints there its pod selector matches. */
    private void selectInNamespace(PolicyState p, NamespaceState st, boolean counted) {
        for (PodModel pod : st.pods.values()) {
            if (pod.endpoint() && p.admin.subject().pods().matches(pod.labels())) {
                TreeSet<String> ps = podPolicies.computeIfAbsent(pod.key(), k -> new TreeSet<>());
                if (counted) {
                    overlaps.added(p, states(ps));
                }
                ps.add(p.key);
                select(p, pod);
                changes.nodeChanged(pod.node());
            }
        }
    }

    /** An admin-tier policy no longer covers a namespace. */
    private void unselectInNamespace(PolicyState p, NamespaceState st) {
        boolean counted = sharesPriority(p);
        for (PodModel pod : st.pods.values()) {
            if (p.selected.contains(pod.key())) {
                TreeSet<String> ps = podPolicies.get(pod.key());
                ps.remove(p.key);
                if (counted) {
                    overlaps.removed(p, states(ps));
                }
                if (ps.isEmpty()) {
                    podPolicies.remove(pod.key());
                }
                unselect(p, pod);
                changes.nodeChanged(pod.node());
            }
        }
    }

    // ---- cluster nodes (for node-address sets)

    void upsertNode(Node node) {
        NodeModel model = NodeModel.of(node);
        NodeModel old = clusterNodes.put(model.name(), model);
        if (old == null) {
            clusterNodeNames = null;
        }
        if (!model.equals(old)) {
            applyNode(old, model);
            judgePodsOn(old, model);
        }
    }

    void deleteNode(String name) {
        NodeModel old = clusterNodes.remove(name);
        if (old != null) {
            clusterNodeNames = null;
            applyNode(old, null);
            judgePodsOn(old, null);
        }
    }

    /** When what a node may give its pods changed (ranges, own addresses), judges their addresses again. */
    private void judgePodsOn(NodeModel old, NodeModel node) {
        boolean sameScope = old != null && node != null && old.podCidrs().equals(node.podCidrs())
                && old.addresses().equals(node.addresses());
        boolean noScope = (old == null || old.podCidrs().isEmpty()) && (node == null || node.podCidrs().isEmpty());
        Set<String> keys = reportedOn.get(node != null ? node.name() : old.name());
        if (sameScope || noScope || keys == null) {
            return;
        }
        for (String key : new ArrayList<>(keys)) {
            judgeAddresses(key);
        }
    }

    private void applyNode(NodeModel old, NodeModel node) {
        List<String> podCidrsBefore = old == null ? List.of() : old.podCidrs();
        List<String> podCidrsAfter = node == null ? List.of() : node.podCidrs();
        if (!podCidrsBefore.equals(podCidrsAfter)) {
            changes.nodeChanged(node != null ? node.name() : old.name()); // its own snapshot carries them
        }
        for (NodeSetState set : nodeSets.values()) {
            List<String> before = set.contribution(old);
            List<String> after = set.contribution(node);
            if (!before.equals(after)) {
                set.removeMembers(before);
                set.addMembers(after);
                changes.membersChanged(set);
            }
        }
    }

    // ---- IP sets

    private IpSetState acquire(IpSetDef def, PolicyState user) {
        IpSetState set = sets.get(def);
        if (set == null) {
            set = new IpSetState(def);
            sets.put(def, set);
            if (def.fixedNamespace()) {
                NamespaceState st = ns(def.namespace());
                st.fixedSets.add(set);
                for (PodModel pod : st.pods.values()) {
                    set.addMembers(set.contribution(pod));
                }
            } else {
                namespaceSelectorSets.add(set);
                for (NamespaceState st : namespaces.values()) {
                    if (def.namespaceSelector().matches(st.labels)) {
                        st.selectorSets.add(set);
                        for (PodModel pod : st.pods.values()) {
                            set.addMembers(set.contribution(pod));
                        }
                    }
                }
            }
        }
        set.users.add(user);
        return set;
    }

    private NodeSetState acquireNodes(NodeSetDef def, PolicyState user) {
        NodeSetState set = nodeSets.get(def);
        if (set == null) {
            set = new NodeSetState(def);
            nodeSets.put(def, set);
            for (NodeModel node : clusterNodes.values()) {
                set.addMembers(set.contribution(node));
            }
        }
        set.users.add(user);
        return set;
    }

    private void release(MemberSet member, PolicyState user) {
        member.users.remove(user);
        if (!member.users.isEmpty()) {
            return;
        }
        changes.setDropped(member);
        if (member instanceof NodeSetState nodeSet) {
            nodeSets.remove(nodeSet.def);
            return;
        }
        IpSetState set = (IpSetState) member;
        sets.remove(set.def);
        if (set.def.fixedNamespace()) {
            NamespaceState st = namespaces.get(set.def.namespace());
            st.fixedSets.remove(set);
            dropIfUnused(st);
        } else {
            namespaceSelectorSets.remove(set);
            for (NamespaceState st : namespaces.values()) {
                st.selectorSets.remove(set);
            }
        }
    }
}
