// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The live IP sets of {@link ClusterIndex} ({@link MemberSet}: pod sets {@link IpSetState}, node
 * sets {@link NodeSetState}), each with the policies holding a reference on it: a set is made and
 * filled from what is indexed on its first reference and dropped with its last, so policies that
 * define the same set share it. Keeps the members up to date as pods, namespace labels and nodes
 * change, each change through {@link #replaceMembers}; the namespaces' own lists of the sets in
 * their scope are kept here too.
 */
final class SetReferences {
    private final Namespaces namespaces;
    private final ClusterNodes clusterNodes;
    private final ScopePods scopePods;
    private final Map<IpSetDef, IpSetState> sets = new HashMap<>();
    private final Set<IpSetState> namespaceSelectorSets = new LinkedHashSet<>();
    private final Map<NodeSetDef, NodeSetState> nodeSets = new HashMap<>();
    private IndexChanges changes;

    SetReferences(Namespaces namespaces, ClusterNodes clusterNodes, ScopePods scopePods) {
        this.namespaces = namespaces;
        this.clusterNodes = clusterNodes;
        this.scopePods = scopePods;
    }

    void reportChangesTo(IndexChanges listener) {
        changes = listener;
    }

    /** The canonical definition of each alive IP set among {@code ids}, by id (for inspection). */
    Map<String, String> describe(Collection<String> ids) {
        Set<String> wanted = new HashSet<>(ids);
        Map<String, String> out = new TreeMap<>();
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
    int count() {
        return sets.size() + nodeSets.size();
    }

    // ---- references

    /** A reference on the set of this definition; a new set is filled from the pods of its scope, found once ({@link ScopePods}). */
    IpSetState acquire(IpSetDef def, PolicyState user) {
        IpSetState set = sets.get(def);
        if (set == null) {
            set = new IpSetState(def);
            sets.put(def, set);
            if (!def.fixedNamespace()) {
                namespaceSelectorSets.add(set);
            }
            List<String> members = new ArrayList<>();
            for (ScopePods.Covered covered : scopePods.of(def)) {
                if (def.fixedNamespace()) {
                    covered.namespace().fixedSets.add(set);
                } else {
                    covered.namespace().selectorSets.add(set);
                }
                for (PodModel pod : covered.pods()) {
                    members.addAll(set.membersOf(pod));
                }
            }
            set.fill(members);
        }
        set.users.add(user);
        return set;
    }

    NodeSetState acquireNodes(NodeSetDef def, PolicyState user) {
        NodeSetState set = nodeSets.get(def);
        if (set == null) {
            set = new NodeSetState(def);
            nodeSets.put(def, set);
            List<String> members = new ArrayList<>();
            for (NodeModel node : clusterNodes.all()) {
                members.addAll(set.contribution(node));
            }
            set.fill(members);
        }
        set.users.add(user);
        return set;
    }

    void release(MemberSet member, PolicyState user) {
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
            namespaces.dropIfUnused(st);
        } else {
            namespaceSelectorSets.remove(set);
            for (NamespaceState st : namespaces.all()) {
                st.selectorSets.remove(set);
            }
        }
    }

    // ---- members

    /** A new namespace: it joins the namespace-selector sets whose selector matches its labels. */
    void coverNew(NamespaceState st) {
        for (IpSetState set : namespaceSelectorSets) {
            if (set.def.namespaceSelector().matches(st.labels)) {
                st.selectorSets.add(set);
            }
        }
    }

    /** A pod changed (old or pod null: it came or went): the sets in its namespace's scope follow. */
    void podChanged(NamespaceState st, PodModel old, PodModel pod) {
        for (IpSetState set : st.fixedSets) {
            replaceMembers(set, set.contribution(old), set.contribution(pod));
        }
        for (IpSetState set : st.selectorSets) {
            replaceMembers(set, set.contribution(old), set.contribution(pod));
        }
    }

    /** A namespace's labels changed: the namespace-selector sets it enters or leaves gain or lose its pods. */
    void namespaceRelabelled(NamespaceState st) {
        for (IpSetState set : namespaceSelectorSets) {
            boolean was = st.selectorSets.contains(set);
            boolean now = set.def.namespaceSelector().matches(st.labels);
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
                replaceMembers(set, now ? List.of() : c, now ? c : List.of());
            }
        }
    }

    /** A Node object changed (old or node null: it came or went): the node sets follow. */
    void nodeChanged(NodeModel old, NodeModel node) {
        for (NodeSetState set : nodeSets.values()) {
            replaceMembers(set, set.contribution(old), set.contribution(node));
        }
    }

    /** Replaces what one object contributed to a set, and reports the set when that changed its members. */
    private void replaceMembers(MemberSet set, List<String> before, List<String> after) {
        if (!before.equals(after)) {
            set.removeMembers(before);
            set.addMembers(after);
            changes.membersChanged(set);
        }
    }
}
