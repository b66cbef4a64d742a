package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Assembles node snapshots from a {@link ClusterIndex}, lazily and from cached parts: the
 * endpoint proto per pod, the IP-set proto per set, and per node its endpoint and policy lists,
 * its sets and the snapshot itself. The index's {@link IndexChanges} tell what went stale; a node
 * is marked changed when one of its endpoints, their policies or those policies' sets changed.
 * Set changes are turned into node changes once per {@link #drainChangedNodes()}/{@link #snapshot}
 * rather than per event, since a cluster-wide set may change on every pod event of a bulk load.
 */
final class NodeSnapshots implements IndexChanges {

    /** A node's parts in snapshot order; a part is null when stale. */
    private static final class NodeParts {
        List<Endpoint> endpoints;
        List<ActivePolicy> policies;
        List<MemberSet> sets;
        NodeSnapshot snapshot;
    }

    private final ClusterIndex index;
    private final Map<String, NodeParts> nodes = new HashMap<>();
    /**
     * Endpoint proto per pod key, valid while the pod and the policies selecting it (their
     * names and directions) are unchanged: a set's members changing touches no endpoint.
     */
    private final Map<String, Endpoint> endpointCache = new HashMap<>();
    private final Map<MemberSet, IpSet> setCache = new HashMap<>();
    private final Set<String> changedNodes = new HashSet<>();
    private final Set<MemberSet> changedSets = new HashSet<>();

    NodeSnapshots(ClusterIndex index) {
        this.index = index;
        index.reportChangesTo(this);
    }

    // ---- what went stale

    @Override
    public void endpointChanged(String podKey) {
        endpointCache.remove(podKey);
    }

    @Override
    public void nodeChanged(String node) {
        changedNodes.add(node);
        nodes.remove(node);
    }

    @Override
    public void membersChanged(MemberSet set) {
        setCache.remove(set);
        changedSets.add(set);
    }

    @Override
    public void setDropped(MemberSet set) {
        setCache.remove(set);
        changedSets.remove(set);
    }

    /** Only the members of a set the node uses changed: its other parts stay cached. */
    private void nodeSetsChanged(String node) {
        changedNodes.add(node);
        NodeParts n = nodes.get(node);
        if (n != null) {
            n.snapshot = null;
        }
    }

    /** Turns set changes recorded since the last flush into node changes. */
    private void flush() {
        for (MemberSet set : changedSets) {
            for (PolicyState user : set.users) {
                for (String node : user.nodes()) {
                    nodeSetsChanged(node);
                }
            }
        }
        changedSets.clear();
    }

    // ---- assembly

    /** Nodes whose snapshot may have changed since the last call; clears the record. */
    Set<String> drainChangedNodes() {
        flush();
        Set<String> out = new TreeSet<>(changedNodes);
        changedNodes.clear();
        return out;
    }

    /** The current snapshot of a node; an empty snapshot for a node without endpoints. */
    NodeSnapshot snapshot(String node) {
        flush();
        Collection<PodModel> endpoints = index.endpointsOn(node);
        if (endpoints == null) {
            return NodeSnapshot.newBuilder().setNode(node).build();
        }
        NodeParts n = nodes.computeIfAbsent(node, k -> new NodeParts());
        if (n.snapshot == null) {
            n.snapshot = build(node, n, endpoints);
        }
        return n.snapshot;
    }

    private NodeSnapshot build(String node, NodeParts n, Collection<PodModel> endpoints) {
        if (n.endpoints == null) {
            assembleParts(n, endpoints);
        }
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder()
                .setNode(node)
                .addAllEndpoints(n.endpoints)
                .addAllPolicies(n.policies);
        for (MemberSet s : n.sets) {
            b.addIpSets(setCache.computeIfAbsent(s, MemberSet::toProto));
        }
        return b.build();
    }

    /** Endpoints (from the per-pod cache), policies by name and their sets by id. */
    private void assembleParts(NodeParts n, Collection<PodModel> pods) {
        List<Endpoint> endpoints = new ArrayList<>(pods.size());
        TreeMap<String, PolicyState> used = new TreeMap<>();
        for (PodModel pod : pods) {
            TreeSet<String> ps = index.policiesSelecting(pod.key());
            if (ps != null) {
                for (String k : ps) {
                    used.put(k, index.policy(k));
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
        TreeMap<String, MemberSet> usedSets = new TreeMap<>();
        for (PolicyState p : used.values()) {
            policyProtos.add(p.proto());
            for (MemberSet s : p.sets) {
                usedSets.put(s.id, s);
            }
        }
        n.endpoints = endpoints;
        n.policies = policyProtos;
        n.sets = new ArrayList<>(usedSets.values());
    }

    /**
     * A pod's endpoint with its tiers in evaluation order: admin (admin-tier policies by
     * priority, name, kind; default PASS: admin rules do not isolate), then the NetworkPolicy
     * tier "default" (by name; default DENY for the directions they isolate), then baseline
     * (default ALLOW). A tier is listed when some policy of it is listed in a direction; an
     * admin-tier policy is listed only in the directions it has rules for.
     */
    private Endpoint endpoint(PodModel pod, TreeSet<String> policyKeys) {
        WorkloadEndpoint.Builder we = WorkloadEndpoint.newBuilder()
                .addAllIps(pod.ips())
                .putAllLabels(new TreeMap<>(pod.labels()));
        if (policyKeys != null) {
            List<PolicyState> admin = new ArrayList<>();
            List<PolicyState> baseline = new ArrayList<>();
            TierInfo.Builder networkPolicies = TierInfo.newBuilder()
                    .setName(PolicyCompiler.TIER)
                    .setDefaultAction(Action.DENY);
            for (String k : policyKeys) {
                PolicyState p = index.policy(k);
                if (p.admin != null) {
                    (p.admin.tier() == AdminPolicy.Tier.ADMIN ? admin : baseline).add(p);
                    continue;
                }
                if (p.ingress()) {
                    networkPolicies.addIngressPolicies(k);
                }
                if (p.egress()) {
                    networkPolicies.addEgressPolicies(k);
                }
            }
            addTier(we, adminTier(AdminPolicyCompiler.ADMIN_TIER, Action.PASS, admin));
            addTier(we, networkPolicies);
            addTier(we, adminTier(AdminPolicyCompiler.BASELINE_TIER, Action.ALLOW, baseline));
            addDomainWatches(we, admin, baseline);
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(pod.namespace()).setPod(pod.name()))
                .setEndpoint(we)
                .build();
    }

    private static TierInfo.Builder adminTier(String name, Action defaultAction, List<PolicyState> policies) {
        policies.sort((a, b) -> CompiledAdminPolicy.ORDER.compare(a.admin, b.admin));
        TierInfo.Builder tier = TierInfo.newBuilder().setName(name).setDefaultAction(defaultAction);
        for (PolicyState p : policies) {
            String policyName = p.proto().getId().getName();
            if (p.ingress()) {
                tier.addIngressPolicies(policyName);
            }
            if (p.egress()) {
                tier.addEgressPolicies(policyName);
            }
        }
        return tier;
    }

    /** The domainNames peers of the endpoint's admin-tier egress rules, distinct, by learned-set id. */
    private static void addDomainWatches(WorkloadEndpoint.Builder we, List<PolicyState> admin, List<PolicyState> baseline) {
        TreeMap<String, io.kubeverdict.proto.v1.DomainNames> watches = new TreeMap<>();
        for (List<PolicyState> tier : List.of(admin, baseline)) {
            for (PolicyState p : tier) {
                for (io.kubeverdict.proto.v1.DomainNames d : p.admin.domainWatches()) {
                    watches.putIfAbsent(d.getLearnedSetId(), d);
                }
            }
        }
        we.addAllDomainWatches(watches.values());
    }

    private static void addTier(WorkloadEndpoint.Builder we, TierInfo.Builder tier) {
        if (tier.getIngressPoliciesCount() > 0 || tier.getEgressPoliciesCount() > 0) {
            we.addTiers(tier);
        }
    }
}
