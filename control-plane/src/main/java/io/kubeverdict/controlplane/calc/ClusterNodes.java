// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The cluster's nodes as {@link ClusterIndex} knows them: the Node objects (labels, addresses and
 * pod ranges, for the node-address sets of {@code nodes} peers and for each node's own snapshot)
 * and how many pods are placed on each node, since a pod's spec.nodeName names a node even where
 * Node objects are not given. Unrelated to where endpoints run, which the index keeps itself.
 */
final class ClusterNodes {
    /** Cluster Node objects by name (labels, addresses). */
    private final Map<String, NodeModel> byName = new HashMap<>();
    /** Node name -> how many pods (of any kind, endpoint or not) are placed on it. */
    private final Map<String, Integer> podsPlaced = new HashMap<>();
    /** Node objects and nodes pods are placed on; null when it changed since it was last made. */
    private Set<String> names = Set.of();

    /**
     * The nodes the cluster has: every Node object and every node a pod is placed on (a pod's
     * spec.nodeName names a node even where Node objects are not given, as in a manifest
     * directory). The same immutable instance until the set changes.
     */
    Set<String> names() {
        if (names == null) {
            Set<String> out = new HashSet<>(byName.keySet());
            out.addAll(podsPlaced.keySet());
            names = Set.copyOf(out);
        }
        return names;
    }

    /** A Node object by name, or null. */
    NodeModel get(String name) {
        return byName.get(name);
    }

    Collection<NodeModel> all() {
        return byName.values();
    }

    /** Keeps a Node object; returns the one it replaces, or null. */
    NodeModel put(NodeModel model) {
        NodeModel old = byName.put(model.name(), model);
        if (old == null) {
            names = null;
        }
        return old;
    }

    /** Forgets a Node object; returns it, or null when it was not known. */
    NodeModel remove(String name) {
        NodeModel old = byName.remove(name);
        if (old != null) {
            names = null;
        }
        return old;
    }

    /** A node's pod ranges (its Node's spec.podCIDRs), empty when it has no Node object or none. */
    List<String> podCidrsOf(String node) {
        NodeModel model = byName.get(node);
        return model == null ? List.of() : model.podCidrs();
    }

    /** A pod moved from one node to another (either may be null: not placed). */
    void moved(String oldNode, String newNode) {
        if (!java.util.Objects.equals(oldNode, newNode)) {
            placed(oldNode, -1);
            placed(newNode, 1);
        }
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
            names = null;
        }
    }
}
