// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Pairs of admin-tier policies of one tier with equal priority, both live or both staged, that select a common pod — where
 * upstream leaves the order open and the calculation picks one (see
 * {@link CompiledAdminPolicy#ORDER}), which deserves a warning. Kept as a count of shared pods per
 * pair, updated whenever the policies selecting a pod change, so it depends only on the current
 * cluster, not on the order of events.
 */
final class PriorityOverlaps {
    /** "keyA keyB" (keyA < keyB) -> pods both select. */
    private final TreeMap<String, Integer> pairs = new TreeMap<>();

    /** The policies selecting each of {@code pods} pods changed from before to after. */
    void changed(List<PolicyState> before, List<PolicyState> after, int pods) {
        for (int i = 0; i < before.size(); i++) {
            count(before.get(i), before.subList(i + 1, before.size()), -pods);
        }
        for (int i = 0; i < after.size(); i++) {
            count(after.get(i), after.subList(i + 1, after.size()), pods);
        }
    }

    private void count(PolicyState p, List<PolicyState> others, int delta) {
        if (p.admin == null) {
            return;
        }
        for (PolicyState q : others) {
            if (q.admin == null
                    || q == p
                    || q.key.equals(p.key)
                    || q.staged() != p.staged() // a staged version may share a live one's priority
                    || q.admin.tier() != p.admin.tier()
                    || q.admin.priority() != p.admin.priority()) {
                continue;
            }
            String pair = p.key.compareTo(q.key) < 0 ? p.key + " " + q.key : q.key + " " + p.key;
            pairs.merge(pair, delta, (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    /** A warning on each policy of each overlapping pair (policies by key). */
    List<PolicyProblem> problems(Function<String, PolicyState> policies) {
        List<PolicyProblem> out = new ArrayList<>();
        for (Map.Entry<String, Integer> e : pairs.entrySet()) {
            String[] keys = e.getKey().split(" ");
            CompiledAdminPolicy a = policies.apply(keys[0]).admin;
            CompiledAdminPolicy b = policies.apply(keys[1]).admin;
            CompiledAdminPolicy first = CompiledAdminPolicy.ORDER.compare(a, b) <= 0 ? a : b;
            String text = "priority " + a.priority() + " in the " + a.tierName() + " tier is also that of "
                    + "%s, and both select some pods; upstream leaves their order open: "
                    + first.kind().kind() + " "
                    + first.name() + " is evaluated first (by name)";
            out.add(PolicyProblem.of(
                    a.kind(), a.name(), "spec.priority", text.formatted(b.kind().kind() + " " + b.name())));
            out.add(PolicyProblem.of(
                    b.kind(), b.name(), "spec.priority", text.formatted(a.kind().kind() + " " + a.name())));
        }
        return out;
    }
}
