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
        List<IpSetState> sets;
        NodeSnapshot snapshot;
    }

    private final ClusterIndex index;
    private final Map<String, NodeParts> nodes = new HashMap<>();
    /**
     * Endpoint proto per pod key, valid while the pod and the policies selecting it (their
     * names and directions) are unchanged: a set's members changing touches no endpoint.
     */
    private final Map<String, Endpoint> endpointCache = new HashMap<>();
    private final Map<IpSetState, IpSet> setCache = new HashMap<>();
    private final Set<String> changedNodes = new HashSet<>();
    private final Set<IpSetState> changedSets = new HashSet<>();

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
    public void membersChanged(IpSetState set) {
        setCache.remove(set);
        changedSets.add(set);
    }

    @Override
    public void setDropped(IpSetState set) {
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
        for (IpSetState set : changedSets) {
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
        for (IpSetState s : n.sets) {
            b.addIpSets(setCache.computeIfAbsent(s, IpSetState::toProto));
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
        TreeMap<String, IpSetState> usedSets = new TreeMap<>();
        for (PolicyState p : used.values()) {
            policyProtos.add(p.compiled.proto());
            for (IpSetState s : p.sets) {
                usedSets.put(s.id, s);
            }
        }
        n.endpoints = endpoints;
        n.policies = policyProtos;
        n.sets = new ArrayList<>(usedSets.values());
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
                PolicyState p = index.policy(k);
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
}
