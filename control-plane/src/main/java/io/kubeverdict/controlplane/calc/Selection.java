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
    /** Pod key -> the pod's entry, shared with the other selections holding the pod. */
    private final Map<String, SelectedPod> selected = new HashMap<>();
    /** Node -> how many of the selected pods are on it. */
    private final Map<String, int[]> nodeCounts = new HashMap<>();

    Selection(IpSetDef scope) {
        this.scope = scope;
    }

    /** Whether an endpoint pod of a namespace in scope is selected. */
    boolean matches(PodModel pod) {
        return ScopePods.matches(scope, pod);
    }

    /**
     * The pod is selected as {@code pod} (again: a newer version). If this selection held it, the
     * entry still has the version it counted: the caller moves the entry to the new version once
     * every selection has been told.
     */
    void add(SelectedPod entry, PodModel pod) {
        SelectedPod before = selected.put(pod.key(), entry);
        if (before != null) {
            uncount(before.pod.node());
            before.holders--;
        }
        entry.holders++;
        nodeCounts.computeIfAbsent(pod.node(), n -> new int[1])[0]++;
    }

    /** The pod of this key is no longer selected: its entry, or null when it was not. */
    SelectedPod remove(String podKey) {
        SelectedPod before = selected.remove(podKey);
        if (before != null) {
            uncount(before.pod.node());
            before.holders--;
        }
        return before;
    }

    private void uncount(String node) {
        int[] count = nodeCounts.get(node);
        if (--count[0] == 0) {
            nodeCounts.remove(node);
        }
    }

    /** The selected pods' entries. */
    Collection<SelectedPod> entries() {
        return selected.values();
    }

    /** The nodes with at least one selected pod. */
    Set<String> nodes() {
        return nodeCounts.keySet();
    }
}
