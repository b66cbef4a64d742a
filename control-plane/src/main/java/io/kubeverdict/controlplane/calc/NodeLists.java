// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A node's policies (by key) and the sets they use (by id), as its snapshot lists them, with how
 * many of those policies use each set. Immutable: {@link #updated} makes the lists after some of
 * the node's pods changed from the policies those pods brought or took away, and returns this
 * instance when none did, so a relabelled pod costs its own selections, not a reassembly of the
 * node from all its pods (with the admin tiers, ~100 policies per pod and their sets).
 */
final class NodeLists {
    static final NodeLists EMPTY = new NodeLists(new PolicyState[0], new MemberSet[0], new int[0]);

    private static final Comparator<PolicyState> BY_KEY = Comparator.comparing(p -> p.key);
    private static final Comparator<MemberSet> BY_ID = Comparator.comparing(s -> s.id);

    private final PolicyState[] policies; // ascending key, keys distinct
    private final MemberSet[] sets; // ascending id, ids distinct
    /** uses[i]: how many of {@link #policies} list sets[i] (a policy listing it twice counts twice). */
    private final int[] uses;
    /** The policies' protos, in order (a view). */
    final List<ActivePolicy> policyProtos;
    /** The sets, in order (a view). */
    final List<MemberSet> setList;

    private NodeLists(PolicyState[] policies, MemberSet[] sets, int[] uses) {
        this.policies = policies;
        this.sets = sets;
        this.uses = uses;
        this.policyProtos = new AbstractList<>() {
            @Override
            public ActivePolicy get(int i) {
                return policies[i].proto();
            }

            @Override
            public int size() {
                return policies.length;
            }
        };
        this.setList = Collections.unmodifiableList(Arrays.asList(sets));
    }

    /** The lists of these policies (distinct keys), assembled from scratch. */
    static NodeLists of(Collection<PolicyState> policies) {
        NodeLists lists = EMPTY.with(policies, List.of());
        if (lists == null) {
            throw new IllegalArgumentException("policies of equal keys or sets of equal ids");
        }
        return lists;
    }

    /**
     * These lists after some of the node's pods changed: {@code changedSelections} are the keys
     * (ascending) of the policies selecting each pod that changed or came, {@code policyOf} the
     * index's policy of a key, and a listed policy stays while {@code stays} says so (the
     * index's version, still selecting an endpoint on the node). A pod that did not change
     * selects what it selected when these lists were made, so only the changed pods can bring a
     * policy; any listed one can go (a gone pod's, a replaced version). Null when the lists do
     * not fit what is asked (bookkeeping gone wrong): the caller reassembles from scratch.
     */
    NodeLists updated(
            List<? extends Collection<String>> changedSelections,
            Function<String, PolicyState> policyOf,
            Predicate<PolicyState> stays) {
        boolean[] gone = new boolean[policies.length];
        List<PolicyState> leaving = new ArrayList<>();
        for (int i = 0; i < policies.length; i++) {
            if (!stays.test(policies[i])) {
                gone[i] = true;
                leaving.add(policies[i]);
            }
        }
        Set<PolicyState> entering = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Collection<String> keys : changedSelections) {
            int j = 0; // both ascending: one walk of the listed policies per pod
            for (String key : keys) {
                while (j < policies.length && compare(policies[j].key, key) < 0) {
                    j++;
                }
                if (j < policies.length && !gone[j] && compare(policies[j].key, key) == 0) {
                    continue; // listed, and staying
                }
                PolicyState p = policyOf.apply(key);
                if (p == null) {
                    return null;
                }
                entering.add(p);
            }
        }
        return with(entering, leaving);
    }

    /**
     * These lists with {@code entering} (distinct, not listed) and without {@code leaving}
     * (listed); this instance when both are empty, null when they do not fit.
     */
    NodeLists with(Collection<PolicyState> entering, Collection<PolicyState> leaving) {
        if (entering.isEmpty() && leaving.isEmpty()) {
            return this;
        }
        int[] counts = uses.clone();
        // Entering first: a set that an entering and a leaving policy share never drops to 0.
        Map<MemberSet, int[]> newSets = new HashMap<>();
        for (PolicyState p : entering) {
            if (indexOf(p) >= 0) {
                return null;
            }
            for (MemberSet s : p.sets) {
                int i = indexOf(s);
                if (i >= 0) {
                    counts[i]++;
                } else {
                    newSets.computeIfAbsent(s, k -> new int[1])[0]++;
                }
            }
        }
        boolean[] gone = new boolean[policies.length];
        for (PolicyState p : leaving) {
            int i = indexOf(p);
            if (i < 0 || gone[i]) {
                return null;
            }
            gone[i] = true;
            for (MemberSet s : p.sets) {
                int j = indexOf(s);
                if (j < 0 || counts[j] == 0) {
                    return null;
                }
                counts[j]--;
            }
        }
        PolicyState[] came = entering.toArray(new PolicyState[0]);
        Arrays.sort(came, BY_KEY);
        PolicyState[] ps = mergedPolicies(gone, came);
        MemberSet[] newOnes = newSets.keySet().toArray(new MemberSet[0]);
        Arrays.sort(newOnes, BY_ID);
        return ps == null ? null : withSets(ps, counts, newOnes, newSets);
    }

    /** The listed policies not gone and the new ones (ascending), merged; null when two keys are equal. */
    private PolicyState[] mergedPolicies(boolean[] gone, PolicyState[] came) {
        PolicyState[] out = new PolicyState[policies.length + came.length];
        int n = 0;
        int c = 0;
        for (int i = 0; i <= policies.length; i++) {
            PolicyState listed = i < policies.length ? policies[i] : null;
            if (listed != null && gone[i]) {
                continue;
            }
            while (c < came.length && (listed == null || compare(came[c].key, listed.key) <= 0)) {
                if (listed != null && compare(came[c].key, listed.key) == 0) {
                    return null;
                }
                out[n++] = came[c++];
            }
            if (listed != null) {
                out[n++] = listed;
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /** New lists of these policies: the listed sets still used and the new ones (ascending), merged; null when two ids are equal. */
    private NodeLists withSets(PolicyState[] ps, int[] counts, MemberSet[] came, Map<MemberSet, int[]> cameUses) {
        MemberSet[] out = new MemberSet[sets.length + came.length];
        int[] outUses = new int[out.length];
        int n = 0;
        int c = 0;
        for (int i = 0; i <= sets.length; i++) {
            MemberSet listed = i < sets.length ? sets[i] : null;
            if (listed != null && counts[i] == 0) {
                continue;
            }
            while (c < came.length && (listed == null || compare(came[c].id, listed.id) <= 0)) {
                if (listed != null && compare(came[c].id, listed.id) == 0) {
                    return null;
                }
                outUses[n] = cameUses.get(came[c])[0];
                out[n++] = came[c++];
            }
            if (listed != null) {
                outUses[n] = counts[i];
                out[n++] = listed;
            }
        }
        return new NodeLists(
                ps,
                n == out.length ? out : Arrays.copyOf(out, n),
                n == outUses.length ? outUses : Arrays.copyOf(outUses, n));
    }

    /** Where p is listed (the same instance), else -1. */
    private int indexOf(PolicyState p) {
        int i = Arrays.binarySearch(policies, p, BY_KEY);
        return i >= 0 && policies[i] == p ? i : -1;
    }

    /** Where s is listed (the same instance), else -1. */
    private int indexOf(MemberSet s) {
        int i = Arrays.binarySearch(sets, s, BY_ID);
        return i >= 0 && sets[i] == s ? i : -1;
    }

    private static int compare(String a, String b) {
        return a == b ? 0 : a.compareTo(b);
    }
}
