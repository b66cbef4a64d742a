// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The endpoint pods one distinct selector selects, shared by every policy with that selector: a
 * NetworkPolicy's pod selector in its namespace, or an admin-tier subject (namespace selector and
 * pod selector). Its scope is an {@link IpSetDef} without a port: the same content an IP set of
 * those pods has. Kept by {@link Selections}; computed once however many policies use it.
 */
final class Selection {
    final IpSetDef scope;
    /** The policies using it (at least one while it lives). */
    final List<PolicyState> policies = new ArrayList<>(1);
    /** Pod key -> the pod as selected. */
    private final Map<String, PodModel> selected = new HashMap<>();
    /** Node -> how many of the selected pods are on it. */
    private final Map<String, int[]> nodeCounts = new HashMap<>();

    Selection(IpSetDef scope) {
        this.scope = scope;
    }

    /** Whether an endpoint pod of a namespace in scope is selected. */
    boolean matches(PodModel pod) {
        return ScopePods.matches(scope, pod);
    }

    /** The pod is selected (again: a newer version replaces the one kept). */
    void add(PodModel pod) {
        PodModel before = selected.put(pod.key(), pod);
        if (before != null) {
            uncount(before.node());
        }
        nodeCounts.computeIfAbsent(pod.node(), n -> new int[1])[0]++;
    }

    /** The pod of this key is no longer selected; false when it was not. */
    boolean remove(String podKey) {
        PodModel before = selected.remove(podKey);
        if (before == null) {
            return false;
        }
        uncount(before.node());
        return true;
    }

    private void uncount(String node) {
        int[] count = nodeCounts.get(node);
        if (--count[0] == 0) {
            nodeCounts.remove(node);
        }
    }

    Collection<PodModel> pods() {
        return selected.values();
    }

    /** The nodes with at least one selected pod. */
    Set<String> nodes() {
        return nodeCounts.keySet();
    }
}
