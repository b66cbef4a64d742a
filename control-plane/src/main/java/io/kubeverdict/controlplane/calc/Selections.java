// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which policies select which endpoint pod, both ways: per pod the keys of the policies selecting
 * it, per policy ({@link PolicyState}) the pods it selects and how many per node, and which
 * admin-tier policies of equal priority select a common pod ({@link PriorityOverlaps}). Every
 * selection change is reported to the {@link IndexChanges} listener; {@link ClusterIndex} decides
 * which selections an event changes.
 */
final class Selections {
    /** The index's policies by key, to turn the keys kept per pod into policies. */
    private final Map<String, PolicyState> policies;

    private final Map<String, TreeSet<String>> podPolicies = new HashMap<>();
    private final PriorityOverlaps overlaps = new PriorityOverlaps();
    private IndexChanges changes;

    Selections(Map<String, PolicyState> policies) {
        this.policies = policies;
    }

    void reportChangesTo(IndexChanges listener) {
        changes = listener;
    }

    /** The keys of the policies selecting a pod, in key order, or null when none does. */
    TreeSet<String> of(String podKey) {
        return podPolicies.get(podKey);
    }

    /** Sets the keys of the policies selecting a pod (none: forgets the pod). */
    void set(String podKey, TreeSet<String> keys) {
        if (keys.isEmpty()) {
            podPolicies.remove(podKey);
        } else {
            podPolicies.put(podKey, keys);
        }
    }

    /** The admin-tier policies whose equal priorities overlap. */
    List<PolicyProblem> overlapProblems() {
        return overlaps.problems(policies::get);
    }

    /** A pod's selecting policies change from {@code before} to {@code after}: the overlap counts follow. */
    void overlapsChanged(Collection<String> before, Collection<String> after) {
        overlaps.changed(states(before), states(after));
    }

    /** The policy's side of a selection: p selects the pod. */
    void select(PolicyState p, PodModel pod) {
        changes.endpointChanged(pod.key());
        p.selected.add(pod.key());
        p.nodeCounts.merge(pod.node(), 1, Integer::sum);
    }

    /** The policy's side of a selection: p no longer selects the pod. */
    void unselect(PolicyState p, PodModel pod) {
        changes.endpointChanged(pod.key());
        p.selected.remove(pod.key());
        p.nodeCounts.computeIfPresent(pod.node(), (k, v) -> v == 1 ? null : v - 1);
    }

    /**
     * p now selects an endpoint pod too, both ways; counted: p may share its priority with
     * another admin-tier policy selecting the pod (see {@link ClusterIndex}'s sharesPriority).
     */
    void add(PolicyState p, PodModel pod, boolean counted) {
        TreeSet<String> ps = podPolicies.computeIfAbsent(pod.key(), k -> new TreeSet<>());
        if (counted) {
            overlaps.added(p, states(ps));
        }
        ps.add(p.key);
        select(p, pod);
        changes.nodeChanged(pod.node());
    }

    /** p no longer selects an endpoint pod, both ways. */
    void remove(PolicyState p, PodModel pod, boolean counted) {
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

    /** Every pod a policy version selected no longer is (the version goes away); pods: the index's, by key. */
    void dropAll(PolicyState old, boolean counted, Map<String, PodModel> pods) {
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

    private List<PolicyState> states(Collection<String> keys) {
        List<PolicyState> out = new ArrayList<>(keys.size());
        for (String k : keys) {
            out.add(policies.get(k));
        }
        return out;
    }
}
