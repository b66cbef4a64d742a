// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which policies select which endpoint pod, both ways. A policy's selector is a {@link Selection}
 * shared by every policy with the same selector in the same scope (a NetworkPolicy's pod selector
 * in its namespace; an admin-tier subject), so the pods a selector selects are computed once; per
 * pod, the keys of the policies selecting it are an interned {@link PolicyKeys}, one instance per
 * distinct combination, kept in the pod's {@link SelectedPod} entry that every selection holding
 * the pod shares. A policy joining or leaving a selection computes each distinct combination's
 * successor once and moves the selection's entries to it, looking no pod up. Also counts which admin-tier policies of equal
 * priority select a common pod ({@link PriorityOverlaps}). Every selection change is reported to
 * the {@link IndexChanges} listener (each endpoint, each node once).
 */
final class Selections {
    /** The index's policies by key, to turn the keys kept per pod into policies. */
    private final Map<String, PolicyState> policies;

    private final Namespaces namespaces;
    private final ScopePods scopePods;
    private final Map<IpSetDef, Selection> byScope = new HashMap<>();
    /** The selections scoped by a namespace selector (admin-tier subjects). */
    private final Set<Selection> selectorScoped = new LinkedHashSet<>();

    /** Pod key -> its entry (the pod and its combination), while a selection holds the pod. */
    private final Map<String, SelectedPod> selectedPods = new HashMap<>();

    private final PolicyKeys.Interned interned = new PolicyKeys.Interned();
    /** Policies that joined or left selections, their pods' combinations not yet moved ({@link #settle}). */
    private final PendingRetags pending = new PendingRetags();

    private final PriorityOverlaps overlaps = new PriorityOverlaps();
    /**
     * Admin-tier policies by tier, priority and form (live or staged): only a policy that shares
     * its group with another can be in a pair {@link PriorityOverlaps} counts.
     */
    private final Map<String, Integer> priorityGroups = new HashMap<>();
    /** Groups with more than one policy: none, and no overlap can change. */
    private int sharedGroups;

    private IndexChanges changes;

    Selections(Map<String, PolicyState> policies, Namespaces namespaces, ScopePods scopePods) {
        this.policies = policies;
        this.namespaces = namespaces;
        this.scopePods = scopePods;
    }

    void reportChangesTo(IndexChanges listener) {
        changes = listener;
    }

    /** The keys of the policies selecting a pod, in key order, or null when none does. */
    List<String> of(String podKey) {
        requireSettled();
        SelectedPod entry = selectedPods.get(podKey);
        return entry == null || entry.keys.isEmpty() ? null : entry.keys;
    }

    /** Distinct combinations of selecting policies that pods hold (for tests). */
    int combinations() {
        requireSettled();
        return interned.size();
    }

    /** Pods with an entry (for tests: exactly the pods some policy selects). */
    int selectedPods() {
        requireSettled();
        return selectedPods.size();
    }

    /** The admin-tier policies whose equal priorities overlap. */
    List<PolicyProblem> overlapProblems() {
        requireSettled();
        return overlaps.problems(policies::get);
    }

    // ---- policies

    /** A policy (registered in the index's map) selects the pods of this scope: its selection, made if new. */
    void acquire(PolicyState p, IpSetDef scope) {
        Selection s = byScope.get(scope);
        if (s == null) {
            s = new Selection(scope);
            byScope.put(scope, s);
            if (!scope.fixedNamespace()) {
                selectorScoped.add(s);
            }
            // The pods of the scope as found for the policy's sets over it, if it has some.
            for (ScopePods.Covered covered : scopePods.of(scope)) {
                covered.namespace().selections.add(s);
                for (PodModel pod : covered.pods()) {
                    s.add(entryOf(pod), pod);
                }
            }
        }
        s.policies.add(p);
        p.selection = s;
        grouped(p, 1);
        if (sharedGroups == 0) {
            pending.joined(s, p);
        } else {
            // Overlaps are counted from combinations that agree with the policy map: none may wait.
            settle();
            retag(s.entries(), s.nodes(), List.of(p), List.of(), sharesGroup(List.of(p)));
        }
    }

    /**
     * Moves the pods of every selection that policies joined or left to their new combinations
     * and reports them. Policies joining and leaving only wait for this while no two admin-tier
     * policies share a priority; the index settles before every read.
     */
    void settle() {
        if (pending.isEmpty()) {
            return;
        }
        for (PendingRetags.Retag r : pending.drain()) {
            Selection s = r.selection();
            // Pended while no group was shared: no pair existed, and none can come of them before
            // the policy now making a group shared joins (counted then). Counting here would resolve
            // keys through a policy map that is ahead of the pods' combinations.
            retag(s.entries(), s.nodes(), r.added(), r.removed(), false);
        }
    }

    private void requireSettled() {
        if (!pending.isEmpty()) {
            throw new IllegalStateException("selections read before the index settled");
        }
    }

    /** A policy version goes away: its pods lose it; its selection goes with its last policy. */
    void release(PolicyState old) {
        Selection s = old.selection;
        s.policies.remove(old);
        if (sharedGroups == 0) {
            pending.left(s, old);
        } else {
            retag(s.entries(), s.nodes(), List.of(), List.of(old), sharesGroup(List.of(old)));
        }
        grouped(old, -1);
        if (!s.policies.isEmpty()) {
            return;
        }
        // Going away: its pods lose what they still hold of it while it can find them.
        List<PolicyState> leaving = pending.takeRemovals(s);
        if (!leaving.isEmpty()) {
            retag(s.entries(), s.nodes(), List.of(), leaving, false); // pended: no group shared
        }
        for (SelectedPod entry : s.entries()) {
            if (--entry.holders == 0) {
                selectedPods.remove(entry.pod.key(), entry);
            }
        }
        byScope.remove(s.scope);
        if (s.scope.fixedNamespace()) {
            NamespaceState st = namespaces.get(s.scope.namespace());
            if (st != null) {
                st.selections.remove(s);
            }
        } else {
            selectorScoped.remove(s);
            for (NamespaceState st : namespaces.all()) {
                st.selections.remove(s);
            }
        }
    }

    /** The selection now covers a namespace: it selects the endpoints there its pod selector matches. */
    private List<SelectedPod> cover(NamespaceState st, Selection s) {
        st.selections.add(s);
        List<SelectedPod> added = new ArrayList<>();
        for (PodModel pod : st.pods.values()) {
            if (s.matches(pod)) {
                SelectedPod entry = entryOf(pod);
                s.add(entry, pod);
                added.add(entry);
            }
        }
        return added;
    }

    /** The pod's entry (the pod as selected now), made and kept when no selection holds the pod yet. */
    private SelectedPod entryOf(PodModel pod) {
        return selectedPods.computeIfAbsent(pod.key(), k -> new SelectedPod(pod));
    }

    // ---- namespaces

    /** A namespace new to the index (no pods yet) is covered by the selections whose namespace selector matches it. */
    void coverNew(NamespaceState st) {
        for (Selection s : selectorScoped) {
            if (s.scope.namespaceSelector().matches(st.labels)) {
                st.selections.add(s);
            }
        }
    }

    /** A namespace's labels changed (already set): selections start or stop covering it. */
    void namespaceRelabelled(NamespaceState st) {
        settle();
        for (Selection s : selectorScoped) {
            boolean was = st.selections.contains(s);
            boolean now = s.scope.namespaceSelector().matches(st.labels);
            if (was == now) {
                continue;
            }
            if (now) {
                List<SelectedPod> added = cover(st, s);
                retag(added, nodesOf(added), s.policies, List.of(), sharesGroup(s.policies));
            } else {
                st.selections.remove(s);
                List<SelectedPod> removed = new ArrayList<>();
                for (PodModel pod : st.pods.values()) {
                    SelectedPod entry = s.remove(pod.key());
                    if (entry != null) {
                        removed.add(entry);
                    }
                }
                retag(removed, nodesOf(removed), List.of(), s.policies, sharesGroup(s.policies));
            }
        }
    }

    private static Set<String> nodesOf(List<SelectedPod> entries) {
        Set<String> out = new HashSet<>();
        for (SelectedPod entry : entries) {
            out.add(entry.pod.node());
        }
        return out;
    }

    // ---- pods

    /**
     * A pod of the namespace changed (old or pod null: it came or went): the selections covering
     * the namespace keep or drop it, and its combination of selecting policies follows.
     */
    void podChanged(NamespaceState st, PodModel old, PodModel pod) {
        settle();
        String key = (pod != null ? pod : old).key();
        SelectedPod held = selectedPods.get(key);
        SelectedPod entry = held;
        List<String> keys = new ArrayList<>();
        for (Selection s : st.selections) {
            if (pod != null && s.matches(pod)) {
                if (entry == null) {
                    entry = new SelectedPod(pod);
                }
                s.add(entry, pod);
                for (PolicyState p : s.policies) {
                    keys.add(p.key);
                }
            } else {
                s.remove(key);
            }
        }
        PolicyKeys before = held == null ? PolicyKeys.EMPTY : held.keys;
        PolicyKeys after = interned.hold(PolicyKeys.of(keys), 1);
        interned.release(before, 1);
        if (after.isEmpty()) {
            // Selected by none: no selection holds the entry any more.
            selectedPods.remove(key);
        } else {
            entry.pod = pod;
            entry.keys = after;
            if (held == null) {
                selectedPods.put(key, entry);
            }
        }
        if (sharedGroups > 0 && !before.equals(after)) {
            overlaps.changed(states(before, List.of()), states(after, List.of()), 1);
        }
    }

    /**
     * The pods' combinations gain the {@code added} policies and lose the {@code removed} ones:
     * each distinct combination is changed and interned once; the pods (each endpoint) and their
     * nodes (each once) are reported. {@code countOverlaps}: {@link PriorityOverlaps} is told
     * (only pairs with a policy that comes or goes change, and only one sharing its group has any).
     */
    private void retag(
            Collection<SelectedPod> entries,
            Collection<String> nodes,
            List<PolicyState> added,
            List<PolicyState> removed,
            boolean countOverlaps) {
        if (entries.isEmpty()) {
            return;
        }
        List<String> addedKeys = keys(added);
        Set<String> removedKeys = new HashSet<>(keys(removed));
        Map<PolicyKeys, Transition> transitions = new IdentityHashMap<>();
        for (SelectedPod entry : entries) {
            // The pod's combination is in the selection's own entry: no lookup per pod.
            PolicyKeys before = entry.keys;
            Transition t = transitions.get(before);
            if (t == null) {
                t = new Transition(interned.hold(before.changed(addedKeys, removedKeys), 0));
                transitions.put(before, t);
            }
            t.pods++;
            entry.keys = t.after;
            if (entry.holders == 0) {
                selectedPods.remove(entry.pod.key(), entry); // no selection holds it any more
            }
            changes.endpointChanged(entry.pod.key());
        }
        for (Map.Entry<PolicyKeys, Transition> e : transitions.entrySet()) {
            Transition t = e.getValue();
            interned.hold(t.after, t.pods);
            interned.release(e.getKey(), t.pods);
            if (countOverlaps) {
                overlaps.changed(states(e.getKey(), removed), states(t.after, added), t.pods);
            }
        }
        for (String node : nodes) {
            changes.nodeChanged(node);
        }
    }

    /** A combination's new interned instance and how many pods moved to it. */
    private static final class Transition {
        final PolicyKeys after;
        int pods;

        Transition(PolicyKeys after) {
            this.after = after;
        }
    }

    /** An admin-tier policy joins (+1) or leaves (-1) its priority group. */
    private void grouped(PolicyState p, int delta) {
        if (p.admin == null) {
            return;
        }
        int before = priorityGroups.getOrDefault(group(p), 0);
        int after = before + delta;
        if (after == 0) {
            priorityGroups.remove(group(p));
        } else {
            priorityGroups.put(group(p), after);
        }
        sharedGroups += (after > 1 ? 1 : 0) - (before > 1 ? 1 : 0);
    }

    private static String group(PolicyState p) {
        return p.admin.tier() + " " + p.admin.priority() + " " + p.staged();
    }

    private boolean sharesGroup(List<PolicyState> states) {
        if (sharedGroups == 0) {
            return false;
        }
        for (PolicyState p : states) {
            if (p.admin != null && priorityGroups.getOrDefault(group(p), 0) > 1) {
                return true;
            }
        }
        return false;
    }

    private static List<String> keys(List<PolicyState> states) {
        List<String> out = new ArrayList<>(states.size());
        for (PolicyState p : states) {
            out.add(p.key);
        }
        return out;
    }

    /**
     * The policies of these keys: {@code versions} for theirs (a version being added or removed,
     * which the index's map may no longer or not yet hold), else the index's.
     */
    private List<PolicyState> states(List<String> keys, List<PolicyState> versions) {
        List<PolicyState> out = new ArrayList<>(keys.size());
        for (String k : keys) {
            PolicyState p = null;
            for (PolicyState v : versions) {
                if (v.key.equals(k)) {
                    p = v;
                    break;
                }
            }
            out.add(p != null ? p : policies.get(k));
        }
        return out;
    }
}
