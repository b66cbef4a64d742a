package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The NetworkPolicy calculation, incremental. Indexes kept up to date on every event:
 * <ul>
 *   <li>per namespace: its pods, its policies, the IP sets scoped to it (podSelector-only
 *       peers, ingress named ports) and the namespace-selector IP sets whose selector matches
 *       its labels — so a pod event only looks at the policies and sets of its namespace;</li>
 *   <li>per policy: the endpoint pods it selects and how many per node;</li>
 *   <li>per pod: the policies selecting it; per node: its endpoints;</li>
 *   <li>per IP set: members with reference counts (two pods may report one address) and the
 *       policies using it (the set lives while one does).</li>
 * </ul>
 * Node snapshots are assembled lazily from cached per-policy and per-set protos; a node is
 * marked changed when one of its endpoints, their policies or those policies' sets changed.
 * Set changes are propagated to nodes once per {@link #drainChangedNodes()}/{@link #snapshot}
 * rather than per event, since a cluster-wide set may change on every pod event of a bulk load.
 */
public final class IncrementalPolicyCalculator implements PolicyCalculator {

    private static final class NsState {
        final String name;
        Map<String, String> labels;
        boolean declared;
        final Map<String, PodModel> pods = new HashMap<>();
        final Set<PolicyState> policies = new LinkedHashSet<>();
        final Set<SetState> fixedSets = new LinkedHashSet<>();
        final Set<SetState> selectorSets = new LinkedHashSet<>();

        NsState(String name) {
            this.name = name;
            this.labels = Labels.namespace(name, Map.of());
        }
    }

    private static final class PolicyState {
        final CompiledPolicy compiled;
        final String key;
        final Set<String> selected = new HashSet<>();
        final Map<String, Integer> nodeCounts = new HashMap<>();
        final List<SetState> sets = new ArrayList<>();

        PolicyState(CompiledPolicy compiled) {
            this.compiled = compiled;
            this.key = compiled.key();
        }
    }

    private static final class SetState {
        final IpSetDef def;
        final String id;
        final Set<PolicyState> users = new HashSet<>();
        final TreeMap<String, Integer> members = new TreeMap<>();
        IpSet proto;

        SetState(IpSetDef def) {
            this.def = def;
            this.id = def.id();
        }
    }

    private static final class NodeState {
        final TreeMap<String, PodModel> endpoints = new TreeMap<>();
        /** Endpoint protos, policy protos and sets in snapshot order; null when stale. */
        List<Endpoint> endpointProtos;
        List<ActivePolicy> policyProtos;
        List<SetState> usedSets;
        NodeSnapshot cached;
    }

    private final Map<String, NsState> namespaces = new HashMap<>();
    private final Map<String, PodModel> pods = new HashMap<>();
    private final Map<String, TreeSet<String>> podPolicies = new HashMap<>();
    private final Map<String, PolicyState> policies = new HashMap<>();
    private final Map<IpSetDef, SetState> sets = new HashMap<>();
    private final Set<SetState> namespaceSelectorSets = new LinkedHashSet<>();
    private final Map<String, NodeState> nodes = new HashMap<>();
    private final Set<String> changedNodes = new HashSet<>();
    private final Set<SetState> changedSets = new HashSet<>();
    /**
     * Endpoint proto per pod key, valid while the pod and the policies selecting it (their
     * names and directions) are unchanged: a set's members changing touches no endpoint.
     */
    private final Map<String, Endpoint> endpointCache = new HashMap<>();

    // ---- namespaces ----

    @Override
    public void upsertNamespace(Namespace namespace) {
        String name = namespace.getMetadata().getName();
        NsState st = ns(name);
        st.declared = true;
        setNamespaceLabels(st, Labels.namespace(name, namespace.getMetadata().getLabels()));
    }

    @Override
    public void deleteNamespace(String name) {
        NsState st = namespaces.get(name);
        if (st == null || !st.declared) {
            return;
        }
        // Pods of a deleted namespace go away through their own events; until then the
        // namespace is seen as the API server would show it: only its name label.
        st.declared = false;
        setNamespaceLabels(st, Labels.namespace(name, Map.of()));
        dropIfUnused(st);
    }

    private NsState ns(String name) {
        NsState st = namespaces.get(name);
        if (st == null) {
            st = new NsState(name);
            namespaces.put(name, st);
            for (SetState set : namespaceSelectorSets) {
                if (set.def.namespaceSelector().matches(st.labels)) {
                    st.selectorSets.add(set);
                }
            }
        }
        return st;
    }

    private void dropIfUnused(NsState st) {
        if (!st.declared && st.pods.isEmpty() && st.policies.isEmpty() && st.fixedSets.isEmpty()) {
            namespaces.remove(st.name);
        }
    }

    private void setNamespaceLabels(NsState st, Map<String, String> labels) {
        if (labels.equals(st.labels)) {
            return;
        }
        st.labels = labels;
        for (SetState set : namespaceSelectorSets) {
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
                List<String> c = contribution(set, pod);
                if (!c.isEmpty()) {
                    if (now) {
                        addMembers(set, c);
                    } else {
                        removeMembers(set, c);
                    }
                    setChanged(set);
                }
            }
        }
    }

    // ---- pods ----

    @Override
    public void upsertPod(Pod pod) {
        PodModel model = PodModel.of(pod);
        PodModel old = pods.put(model.key(), model);
        if (!model.equals(old)) {
            applyPod(old, model);
        }
    }

    @Override
    public void deletePod(String namespace, String name) {
        PodModel old = pods.remove(namespace + "/" + name);
        if (old != null) {
            applyPod(old, null);
        }
    }

    private void applyPod(PodModel old, PodModel pod) {
        PodModel any = pod != null ? pod : old;
        String key = any.key();
        endpointCache.remove(key);
        NsState st = ns(any.namespace());
        if (pod != null) {
            st.pods.put(pod.name(), pod);
        } else {
            st.pods.remove(old.name());
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
        }
        if (old != null && old.endpoint()) {
            for (String p : before) {
                unselect(policies.get(p), old);
            }
            NodeState n = nodes.get(old.node());
            n.endpoints.remove(key);
            nodeChanged(old.node());
            if (n.endpoints.isEmpty()) {
                nodes.remove(old.node());
            }
        }
        if (pod != null && pod.endpoint()) {
            for (String p : after) {
                select(policies.get(p), pod);
            }
            nodes.computeIfAbsent(pod.node(), n -> new NodeState()).endpoints.put(key, pod);
            nodeChanged(pod.node());
        }
        if (after.isEmpty()) {
            podPolicies.remove(key);
        } else {
            podPolicies.put(key, after);
        }
        dropIfUnused(st);
    }

    private void updateSetMembership(Set<SetState> candidates, PodModel old, PodModel pod) {
        for (SetState set : candidates) {
            List<String> before = contribution(set, old);
            List<String> after = contribution(set, pod);
            if (!before.equals(after)) {
                removeMembers(set, before);
                addMembers(set, after);
                setChanged(set);
            }
        }
    }

    /** The members a pod gives a set, assuming the pod's namespace is in the set's scope. */
    private static List<String> contribution(SetState set, PodModel pod) {
        if (pod == null || !pod.endpoint() || !set.def.podSelector().matches(pod.labels())) {
            return List.of();
        }
        if (set.def.portName() == null) {
            return pod.ips();
        }
        List<String> out = new ArrayList<>(2);
        for (PodModel.NamedPort np : pod.namedPorts()) {
            if (np.name().equals(set.def.portName()) && np.protocol() == set.def.protocol()) {
                String suffix = "," + IpSetDef.memberProtocol(np.protocol()) + ":" + np.port();
                for (String ip : pod.ips()) {
                    out.add(ip + suffix);
                }
            }
        }
        return out;
    }

    private static void addMembers(SetState set, List<String> members) {
        for (String m : members) {
            set.members.merge(m, 1, Integer::sum);
        }
    }

    private static void removeMembers(SetState set, List<String> members) {
        for (String m : members) {
            set.members.computeIfPresent(m, (k, v) -> v == 1 ? null : v - 1);
        }
    }

    private void setChanged(SetState set) {
        set.proto = null;
        changedSets.add(set);
    }

    private void select(PolicyState p, PodModel pod) {
        endpointCache.remove(pod.key());
        p.selected.add(pod.key());
        p.nodeCounts.merge(pod.node(), 1, Integer::sum);
    }

    private void unselect(PolicyState p, PodModel pod) {
        endpointCache.remove(pod.key());
        p.selected.remove(pod.key());
        p.nodeCounts.computeIfPresent(pod.node(), (k, v) -> v == 1 ? null : v - 1);
    }

    // ---- policies ----

    @Override
    public void upsertPolicy(NetworkPolicy policy) {
        CompiledPolicy compiled = PolicyCompiler.compile(policy);
        PolicyState old = policies.get(compiled.key());
        if (old != null && old.compiled.equals(compiled)) {
            return;
        }
        NsState st = ns(compiled.namespace());
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
                nodeChanged(pod.node());
            }
        }
    }

    @Override
    public void deletePolicy(String namespace, String name) {
        PolicyState old = policies.remove(namespace + "/" + name);
        if (old != null) {
            NsState st = namespaces.get(namespace);
            removePolicy(old, st);
            dropIfUnused(st);
        }
    }

    private void removePolicy(PolicyState old, NsState st) {
        st.policies.remove(old);
        for (String podKey : old.selected) {
            endpointCache.remove(podKey);
            TreeSet<String> ps = podPolicies.get(podKey);
            ps.remove(old.key);
            if (ps.isEmpty()) {
                podPolicies.remove(podKey);
            }
            nodeChanged(pods.get(podKey).node());
        }
        for (SetState set : old.sets) {
            release(set, old);
        }
    }

    private SetState acquire(IpSetDef def, PolicyState user) {
        SetState set = sets.get(def);
        if (set == null) {
            set = new SetState(def);
            sets.put(def, set);
            if (def.fixedNamespace()) {
                NsState st = ns(def.namespace());
                st.fixedSets.add(set);
                for (PodModel pod : st.pods.values()) {
                    addMembers(set, contribution(set, pod));
                }
            } else {
                namespaceSelectorSets.add(set);
                for (NsState st : namespaces.values()) {
                    if (def.namespaceSelector().matches(st.labels)) {
                        st.selectorSets.add(set);
                        for (PodModel pod : st.pods.values()) {
                            addMembers(set, contribution(set, pod));
                        }
                    }
                }
            }
        }
        set.users.add(user);
        return set;
    }

    private void release(SetState set, PolicyState user) {
        set.users.remove(user);
        if (!set.users.isEmpty()) {
            return;
        }
        sets.remove(set.def);
        changedSets.remove(set);
        if (set.def.fixedNamespace()) {
            NsState st = namespaces.get(set.def.namespace());
            st.fixedSets.remove(set);
            dropIfUnused(st);
        } else {
            namespaceSelectorSets.remove(set);
            for (NsState st : namespaces.values()) {
                st.selectorSets.remove(set);
            }
        }
    }

    // ---- nodes and snapshots ----

    /** A node's endpoints or the policies selecting them changed. */
    private void nodeChanged(String node) {
        changedNodes.add(node);
        NodeState n = nodes.get(node);
        if (n != null) {
            n.cached = null;
            n.endpointProtos = null;
            n.policyProtos = null;
            n.usedSets = null;
        }
    }

    /** Only the members of a set the node uses changed: its other parts stay cached. */
    private void nodeSetsChanged(String node) {
        changedNodes.add(node);
        NodeState n = nodes.get(node);
        if (n != null) {
            n.cached = null;
        }
    }

    /** Turns set changes recorded since the last flush into node changes. */
    private void flush() {
        for (SetState set : changedSets) {
            for (PolicyState user : set.users) {
                for (String node : user.nodeCounts.keySet()) {
                    nodeSetsChanged(node);
                }
            }
        }
        changedSets.clear();
    }

    @Override
    public Set<String> nodes() {
        return new TreeSet<>(nodes.keySet());
    }

    @Override
    public NodeSnapshot snapshot(String node) {
        flush();
        NodeState n = nodes.get(node);
        if (n == null) {
            return NodeSnapshot.newBuilder().setNode(node).build();
        }
        if (n.cached == null) {
            n.cached = build(node, n);
        }
        return n.cached;
    }

    private NodeSnapshot build(String node, NodeState n) {
        if (n.endpointProtos == null) {
            assembleParts(n);
        }
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder()
                .setNode(node)
                .addAllEndpoints(n.endpointProtos)
                .addAllPolicies(n.policyProtos);
        for (SetState s : n.usedSets) {
            if (s.proto == null) {
                s.proto = IpSet.newBuilder()
                        .setId(s.id)
                        .setType(s.def.type())
                        .addAllMembers(s.members.keySet())
                        .build();
            }
            b.addIpSets(s.proto);
        }
        return b.build();
    }

    /** Endpoints (from the per-pod cache), policies by name and their sets by id. */
    private void assembleParts(NodeState n) {
        List<Endpoint> endpoints = new ArrayList<>(n.endpoints.size());
        TreeMap<String, PolicyState> used = new TreeMap<>();
        for (PodModel pod : n.endpoints.values()) {
            TreeSet<String> ps = podPolicies.get(pod.key());
            if (ps != null) {
                for (String k : ps) {
                    used.put(k, policies.get(k));
                }
            }
            Endpoint e = endpointCache.get(pod.key());
            if (e == null) {
                e = endpoint(pod, ps);
                endpointCache.put(pod.key(), e);
            }
            endpoints.add(e);
        }
        List<ActivePolicy> policyProtos = new ArrayList<>(used.size());
        TreeMap<String, SetState> usedSets = new TreeMap<>();
        for (PolicyState p : used.values()) {
            policyProtos.add(p.compiled.proto());
            for (SetState s : p.sets) {
                usedSets.put(s.id, s);
            }
        }
        n.endpointProtos = endpoints;
        n.policyProtos = policyProtos;
        n.usedSets = new ArrayList<>(usedSets.values());
    }

    private Endpoint endpoint(PodModel pod, TreeSet<String> policyKeys) {
        WorkloadEndpoint.Builder we = WorkloadEndpoint.newBuilder()
                .addAllIps(pod.ips())
                .putAllLabels(new TreeMap<>(pod.labels()));
        if (policyKeys != null) {
            TierInfo.Builder tier = TierInfo.newBuilder()
                    .setName(PolicyCompiler.TIER)
                    .setDefaultAction(Action.DENY);
            for (String k : policyKeys) {
                PolicyState p = policies.get(k);
                if (p.compiled.ingress()) {
                    tier.addIngressPolicies(k);
                }
                if (p.compiled.egress()) {
                    tier.addEgressPolicies(k);
                }
            }
            we.addTiers(tier);
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(pod.namespace()).setPod(pod.name()))
                .setEndpoint(we)
                .build();
    }

    @Override
    public Set<String> drainChangedNodes() {
        flush();
        Set<String> out = new TreeSet<>(changedNodes);
        changedNodes.clear();
        return out;
    }

    @Override
    public List<PolicyProblem> problems() {
        List<PolicyProblem> out = new ArrayList<>();
        for (PolicyState p : policies.values()) {
            out.addAll(p.compiled.problems());
        }
        out.sort(Comparator.comparing(PolicyProblem::namespace).thenComparing(PolicyProblem::name)
                .thenComparing(PolicyProblem::field));
        return out;
    }

    /** Number of distinct IP sets alive (for tests of reference counting and for metrics). */
    @Override
    public Map<String, String> describeIpSets(Collection<String> ids) {
        Set<String> wanted = new HashSet<>(ids);
        Map<String, String> out = new TreeMap<>();
        for (SetState set : sets.values()) {
            if (wanted.contains(set.id)) {
                out.put(set.id, set.def.canonical());
            }
        }
        return out;
    }

    public int ipSetCount() {
        return sets.size();
    }
}
