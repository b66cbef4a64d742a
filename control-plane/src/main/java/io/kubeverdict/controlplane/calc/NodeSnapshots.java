// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Assembles node snapshots from a {@link ClusterIndex}, lazily and from cached parts: the
 * endpoint proto per pod, the IP-set proto per set, and per node its endpoint and policy lists,
 * its sets and the snapshot itself. The index's {@link IndexChanges} tell what went stale; a node
 * is changed when one of its endpoints or their policies changed (its own parts), and its
 * snapshot is stale when one of its sets' members changed since it was built.
 *
 * <p>A set change does no work per node until a node's snapshot is asked for: sets and node
 * snapshots carry counts of set changes ({@link MemberSet#membersChangedAt}, {@link
 * NodeParts#builtAt}), and a node whose parts are assembled and only whose sets changed gets its
 * previous snapshot with just the changed set protos replaced (its endpoint and policy lists are
 * the same list instances as before, so whoever diffs the two finds the unchanged parts by
 * identity). {@link #drainChanges} reports such a change once, as the set's {@link SetChange}
 * (new version and net delta; no proto built), and {@link #publishableSnapshot} lists a drained
 * set as last listed; {@link #drainChangedNodes} names every node listing the set, found in a
 * reverse index of the assembled parts ({@link #setUsers}).
 *
 * <p>A node whose endpoints or their policies changed is assembled again from its previous
 * parts, changed by the pods that changed ({@link #reassemble}, {@link NodeLists}), not from all
 * its pods.
 */
final class NodeSnapshots implements IndexChanges {

    /**
     * A node's assembled parts in snapshot order and its latest snapshot. In {@link #nodes} only
     * while the parts are valid: a change of the node's endpoints or their policies moves it to
     * {@link #staleParts}, from which the next assembly starts.
     */
    private static final class NodeParts {
        final String node;
        /** The endpoints' pod keys, ascending: {@link #endpoints} in the same order. */
        final String[] podKeys;

        final List<Endpoint> endpoints;
        final NodeLists lists;
        final List<ActivePolicy> policies;
        final List<MemberSet> sets;
        /** Built from these parts, with the set protos current at {@link #builtAt}. */
        NodeSnapshot snapshot;
        /** {@link #setChanges} when {@link #snapshot} was built or brought up to date. */
        long builtAt;

        NodeParts(String node, String[] podKeys, List<Endpoint> endpoints, NodeLists lists) {
            this.node = node;
            this.podKeys = podKeys;
            this.endpoints = endpoints;
            this.lists = lists;
            this.policies = lists.policyProtos;
            this.sets = lists.setList;
        }
    }

    private final ClusterIndex index;
    private final EndpointProtos endpointProtos;
    private final Map<String, NodeParts> nodes = new HashMap<>();
    /**
     * Parts of nodes changed since they were assembled (not valid, not in {@link #nodes}): what
     * the node's next assembly changes by its pods that changed, instead of starting from all.
     */
    private final Map<String, NodeParts> staleParts = new HashMap<>();
    /** Assemblies from stale parts, and those whose stale parts did not fit the index (a bookkeeping error: assembled from scratch). */
    private int reassemblies;

    private int partsMismatches;
    /**
     * Endpoint proto per pod key, valid while the pod and the policies selecting it (their
     * names and directions) are unchanged: a set's members changing touches no endpoint.
     */
    private final Map<String, Endpoint> endpointCache = new HashMap<>();

    /**
     * Per live set, the nodes whose assembled parts list it (kept with {@link #nodes}), for
     * {@link #drainChangedNodes} alone: made on its first call (null before), so that a caller
     * of {@link #drainChanges} (the service) does not keep it for every node it rebuilds.
     */
    private Map<MemberSet, Set<NodeParts>> setUsers;
    /** Nodes whose endpoints or their policies changed since the last drain. */
    private Set<String> changedNodes = new HashSet<>();
    /**
     * Nodes with endpoints drained but not built since (a caller that drains without asking for
     * every snapshot): they have no assembled parts, so {@link #setUsers} cannot name them; a set
     * change finds them through the policies using the set. Empty where every drained node is
     * built (the service).
     */
    private final Set<String> drainedUnbuilt = new HashSet<>();

    /** Live sets whose members changed since the last drain. */
    private Set<MemberSet> changedSets = new HashSet<>();
    /** Ids of sets dropped since the last drain (a set of the same id may live again since). */
    private Set<String> droppedSets = new HashSet<>();
    /** How many times set members changed: the clock of {@link MemberSet#membersChangedAt}. */
    private long setChanges;

    NodeSnapshots(ClusterIndex index) {
        this.index = index;
        this.endpointProtos = new EndpointProtos(index);
        index.reportChangesTo(this);
    }

    // ---- what went stale

    @Override
    public void endpointChanged(String podKey) {
        if (!endpointCache.isEmpty()) { // a full calculation reports every pod, not yet cached, many times
            endpointCache.remove(podKey);
        }
    }

    @Override
    public void nodeChanged(String node) {
        changedNodes.add(node);
        NodeParts n = nodes.remove(node);
        if (n != null) {
            staleParts.put(node, n);
        }
        if (n != null && setUsers != null) {
            for (MemberSet s : n.sets) {
                Set<NodeParts> users = setUsers.get(s);
                if (users != null) {
                    users.remove(n);
                }
            }
        }
    }

    @Override
    public void membersChanged(MemberSet set) {
        changedSets.add(set);
        set.membersChangedAt = ++setChanges;
    }

    @Override
    public void setDropped(MemberSet set) {
        changedSets.remove(set);
        if (setUsers != null) {
            setUsers.remove(set);
        }
        droppedSets.add(set.id);
    }

    /**
     * The set, emptied. A HashSet keeps the table it grew to, and iterating or clearing it costs
     * that table's size: after a bulk load (every node, every set changed) each later small
     * change would pay for the bulk. A set that grew large is replaced instead.
     */
    private static <T> Set<T> emptied(Set<T> s) {
        if (s.size() > 64) {
            return new HashSet<>();
        }
        s.clear();
        return s;
    }

    // ---- assembly

    /** Nodes whose snapshot may have changed since the last drain, set changes included; clears the record. */
    Set<String> drainChangedNodes() {
        return drain(true).nodes();
    }

    /** See {@link PolicyCalculator#drainChanges}: set changes as the sets' deltas, not as nodes. */
    PolicyCalculator.Changes drainChanges() {
        return drain(false);
    }

    private PolicyCalculator.Changes drain(boolean setUsersAsNodes) {
        if (setUsersAsNodes && setUsers == null) {
            setUsers = new HashMap<>();
            nodes.values().forEach(this::addSetUsers);
        }
        Set<String> out = new TreeSet<>(changedNodes);
        List<MemberSet> sets = new ArrayList<>(changedSets);
        sets.sort(Comparator.comparing(s -> s.id));
        List<SetChange> deltas = new ArrayList<>(setUsersAsNodes ? 0 : sets.size());
        for (MemberSet set : sets) {
            SetChange change = set.drain();
            if (setUsersAsNodes) {
                for (NodeParts n : setUsers.getOrDefault(set, Set.of())) {
                    out.add(n.node);
                }
            } else if (change.from() != change.to()) {
                deltas.add(change);
            }
            if (!drainedUnbuilt.isEmpty()) {
                // No parts, so no snapshot to hand a set to: the node is changed as a whole.
                for (PolicyState user : set.users) {
                    for (String node : user.nodes()) {
                        if (drainedUnbuilt.contains(node)) {
                            changedNodes.add(node);
                            out.add(node);
                        }
                    }
                }
            }
        }
        for (String node : changedNodes) {
            if (!nodes.containsKey(node) && index.endpointsOn(node) != null) {
                drainedUnbuilt.add(node);
            } else {
                drainedUnbuilt.remove(node);
                if (index.endpointsOn(node) == null) {
                    staleParts.remove(node); // no pods left (a node gone): nothing to start from
                }
            }
        }
        changedNodes = emptied(changedNodes);
        changedSets = emptied(changedSets);
        Set<String> dropped = droppedSets.isEmpty() ? Set.of() : new TreeSet<>(droppedSets);
        droppedSets = emptied(droppedSets);
        return new PolicyCalculator.Changes(out, deltas, setUsersAsNodes ? Set.of() : dropped);
    }

    /**
     * The current snapshot of a node; an empty snapshot (but for its pod ranges) for a node
     * without endpoints. A change of the node's pod ranges is a node change (rare: they are set
     * once per Node), so it rebuilds the parts rather than keeping a path of its own.
     */
    NodeSnapshot snapshot(String node) {
        NodeParts n = nodes.get(node);
        if (n != null) {
            if (n.builtAt < setChanges) {
                n.snapshot = withCurrentSets(n);
                n.builtAt = setChanges;
            }
            return n.snapshot;
        }
        return assembled(node, true);
    }

    /**
     * See {@link PolicyCalculator#publishableSnapshot}: like {@link #snapshot}, but a set whose
     * current content was reported by {@link #drainChanges} may be listed with the content a
     * node snapshot last listed, so that a change of a large set costs no copy of it here.
     */
    NodeSnapshot publishableSnapshot(String node) {
        NodeParts n = nodes.get(node);
        return n != null ? n.snapshot : assembled(node, false);
    }

    /** A node without assembled parts: assembles and builds them (with current set protos, or as published). */
    private NodeSnapshot assembled(String node, boolean currentSets) {
        drainedUnbuilt.remove(node);
        NodeParts stale = staleParts.remove(node);
        Collection<PodModel> endpoints = index.endpointsOn(node);
        if (endpoints == null) {
            return NodeSnapshot.newBuilder()
                    .setNode(node)
                    .addAllPodCidrs(index.podCidrsOf(node))
                    .build();
        }
        NodeParts assembled = stale == null ? assemble(node, endpoints) : reassemble(stale, endpoints);
        nodes.put(node, assembled);
        if (setUsers != null) {
            addSetUsers(assembled);
        }
        build(assembled, currentSets);
        return assembled.snapshot;
    }

    private void addSetUsers(NodeParts n) {
        for (MemberSet s : n.sets) {
            setUsers.computeIfAbsent(s, k -> new HashSet<>()).add(n);
        }
    }

    /**
     * Builds the node's snapshot from its parts. With {@code currentSets} false a set is listed
     * as a snapshot last listed it when its newer content was drained ({@link
     * #publishableSnapshot}); {@link NodeParts#builtAt} then goes back to before the oldest such
     * set's change, so that {@link #snapshot} brings those sets up to date.
     */
    private void build(NodeParts n, boolean currentSets) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder()
                .setNode(n.node)
                .addAllEndpoints(n.endpoints)
                .addAllPolicies(n.policies)
                .addAllPodCidrs(index.podCidrsOf(n.node));
        long upToDate = setChanges;
        for (MemberSet s : n.sets) {
            IpSet proto = currentSets ? setProto(s) : listedProto(s);
            if (proto != s.version().builtProto()) {
                upToDate = Math.min(upToDate, s.membersChangedAt - 1);
            }
            b.addIpSets(proto);
        }
        n.snapshot = b.build();
        n.builtAt = upToDate;
    }

    /**
     * The set's proto as a published snapshot may list it: the current one when built, else the
     * one last listed when the current content was drained (the drained change supersedes it
     * wherever it is published), else the current one, built now.
     */
    private static IpSet listedProto(MemberSet s) {
        SetVersion v = s.version();
        IpSet built = v.builtProto();
        if (built == null && s.listed != null && s.drainedCurrent()) {
            return s.listed;
        }
        return setProto(s);
    }

    /**
     * The node's snapshot with the current proto of each of its sets: the previous snapshot with
     * the sets changed since it was built replaced. toBuilder() takes the previous message's
     * lists as they are (protobuf copies a repeated field only when it is modified), so endpoints
     * and policies are not copied at all and the ip_sets list only when a set changed. Equal to
     * {@link #build}.
     */
    private NodeSnapshot withCurrentSets(NodeParts n) {
        NodeSnapshot.Builder b = null;
        for (int i = 0; i < n.sets.size(); i++) {
            MemberSet s = n.sets.get(i);
            if (s.membersChangedAt <= n.builtAt) {
                continue;
            }
            IpSet proto = setProto(s);
            if (proto != n.snapshot.getIpSets(i)) {
                if (b == null) {
                    b = n.snapshot.toBuilder();
                }
                b.setIpSets(i, proto);
            }
        }
        return b == null ? n.snapshot : b.build();
    }

    /** The set's current proto (built once per version), remembered as the one last listed. */
    private static IpSet setProto(MemberSet s) {
        IpSet proto = s.version().proto();
        s.listed = proto;
        return proto;
    }

    /** Endpoints (from the per-pod cache), policies by name and their sets by id, from all the node's pods. */
    private NodeParts assemble(String node, Collection<PodModel> pods) {
        String[] podKeys = new String[pods.size()];
        List<Endpoint> endpoints = new ArrayList<>(pods.size());
        // Hashed, then sorted once: a node's pods share most of their policies (admin tiers: all).
        Map<String, PolicyState> used = new HashMap<>();
        for (PodModel pod : pods) {
            List<String> ps = index.policiesSelecting(pod.key());
            if (ps != null) {
                for (String k : ps) {
                    used.computeIfAbsent(k, index::policy);
                }
            }
            podKeys[endpoints.size()] = pod.key();
            endpoints.add(endpoint(pod, ps));
        }
        return new NodeParts(node, podKeys, endpoints, NodeLists.of(used.values()));
    }

    /**
     * The node's parts from its stale ones, changed by the pods that changed: a pod whose endpoint
     * proto is still the cached one it had (no endpointChanged since) selects what it selected
     * then, so only the others (changed, come or gone) can bring policies or take them away
     * ({@link NodeLists#updated}); a listed policy stays while it is the index's and selects an
     * endpoint on the node ({@link PolicyState#nodes}). From scratch when the stale lists do
     * not fit.
     */
    private NodeParts reassemble(NodeParts stale, Collection<PodModel> pods) {
        String node = stale.node;
        reassemblies++;
        String[] podKeys = new String[pods.size()];
        List<Endpoint> endpoints = new ArrayList<>(pods.size());
        List<List<String>> changedSelections = new ArrayList<>();
        boolean changed = false;
        int o = 0; // both in key order: one walk of the stale pods
        for (PodModel pod : pods) {
            String key = pod.key();
            while (o < stale.podKeys.length && stale.podKeys[o].compareTo(key) < 0) {
                o++; // gone from the node
                changed = true;
            }
            Endpoint before =
                    o < stale.podKeys.length && stale.podKeys[o].equals(key) ? stale.endpoints.get(o++) : null;
            Endpoint e = endpointCache.get(key);
            if (e == null || e != before) {
                changed = true;
                List<String> ps = index.policiesSelecting(key);
                if (ps != null) {
                    changedSelections.add(ps);
                }
                e = endpoint(pod, ps);
            }
            podKeys[endpoints.size()] = key;
            endpoints.add(e);
        }
        if (!changed && o == stale.podKeys.length) {
            return new NodeParts(node, stale.podKeys, stale.endpoints, stale.lists); // pod ranges changed
        }
        NodeLists lists = stale.lists.updated(
                changedSelections,
                index::policy,
                p -> index.policy(p.key) == p && p.nodes().contains(node));
        if (lists == null) {
            partsMismatches++;
            return assemble(node, pods);
        }
        return new NodeParts(node, podKeys, endpoints, lists);
    }

    /** The pod's endpoint proto, from the per-pod cache or built (with the keys of its selecting policies). */
    private Endpoint endpoint(PodModel pod, List<String> policyKeys) {
        Endpoint e = endpointCache.get(pod.key());
        if (e == null) {
            e = endpointProtos.endpoint(pod, policyKeys);
            endpointCache.put(pod.key(), e);
        }
        return e;
    }

    /** How many assemblies started from stale parts (tests: that the differential tests reach them). */
    int reassemblies() {
        return reassemblies;
    }

    /** How many assemblies found their stale parts not fitting the index (tests: must stay 0). */
    int partsMismatches() {
        return partsMismatches;
    }
}
