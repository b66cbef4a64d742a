// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The policies that joined or left each selection since its pods' combinations were last brought
 * up to date. Many policies over one subject (every ANP and CNP of one app cluster-wide, say) then
 * move the subject's pods once, not once per policy. A version that leaves before it ever reached
 * the pods is simply forgotten.
 */
final class PendingRetags {
    /** One retag to apply: the selection, the policies its pods gain and those they lose. */
    record Retag(Selection selection, List<PolicyState> added, List<PolicyState> removed) {}

    private static final class Pending {
        final List<PolicyState> added = new ArrayList<>(1);
        final List<PolicyState> removed = new ArrayList<>(1);
    }

    private final Map<Selection, Pending> bySelection = new LinkedHashMap<>();

    boolean isEmpty() {
        return bySelection.isEmpty();
    }

    void joined(Selection s, PolicyState p) {
        bySelection.computeIfAbsent(s, k -> new Pending()).added.add(p);
    }

    /** The policy leaves the selection: forgotten when it had not reached the pods yet. */
    void left(Selection s, PolicyState p) {
        Pending pending = bySelection.get(s);
        if (pending != null && pending.added.remove(p)) {
            if (pending.added.isEmpty() && pending.removed.isEmpty()) {
                bySelection.remove(s);
            }
            return;
        }
        bySelection.computeIfAbsent(s, k -> new Pending()).removed.add(p);
    }

    /** The pending retags of one selection only (it is going away): what its pods lose. */
    List<PolicyState> takeRemovals(Selection s) {
        Pending pending = bySelection.remove(s);
        if (pending == null) {
            return List.of();
        }
        if (!pending.added.isEmpty()) {
            throw new IllegalStateException("a selection with policies still joining is going away");
        }
        return pending.removed;
    }

    /**
     * Everything pending, in an order that keeps each key right: a policy key leaves (its older
     * version) before it joins again (its newer one, possibly in another selection), so every
     * removal comes first, together with the joins of the same keys in the same selection, then
     * the remaining joins.
     */
    List<Retag> drain() {
        List<Retag> removals = new ArrayList<>();
        List<Retag> joins = new ArrayList<>();
        for (Map.Entry<Selection, Pending> e : bySelection.entrySet()) {
            Pending p = e.getValue();
            Set<String> leaving = new HashSet<>();
            p.removed.forEach(r -> leaving.add(r.key));
            List<PolicyState> rejoining = new ArrayList<>();
            List<PolicyState> later = new ArrayList<>();
            for (PolicyState a : p.added) {
                (leaving.contains(a.key) ? rejoining : later).add(a);
            }
            if (!p.removed.isEmpty()) {
                removals.add(new Retag(e.getKey(), rejoining, p.removed));
            }
            if (!later.isEmpty()) {
                joins.add(new Retag(e.getKey(), later, List.of()));
            }
        }
        bySelection.clear();
        removals.addAll(joins);
        return removals;
    }
}
