// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import java.util.Set;

/**
 * The keys of the policies selecting one pod, sorted, immutable and interned: pods selected by
 * the same policies (most pods of a cluster share their combination with thousands of others)
 * hold one instance, instead of a tree of keys each. {@link Interned} keeps the instances alive
 * while a pod holds them.
 */
final class PolicyKeys extends AbstractList<String> implements RandomAccess {
    static final PolicyKeys EMPTY = new PolicyKeys(new String[0]);

    private final String[] keys;
    private final int hash;
    /** Pods holding this instance (bookkeeping of {@link Interned}). */
    private int holders;

    private PolicyKeys(String[] sortedKeys) {
        this.keys = sortedKeys;
        this.hash = Arrays.hashCode(sortedKeys);
    }

    /** The keys, sorted (they are distinct: a policy has one key). */
    static PolicyKeys of(Collection<String> keys) {
        if (keys.isEmpty()) {
            return EMPTY;
        }
        String[] sorted = keys.toArray(new String[0]);
        Arrays.sort(sorted);
        return new PolicyKeys(sorted);
    }

    /** These keys with {@code added} and without {@code removed} (not interned). */
    PolicyKeys changed(Collection<String> added, Set<String> removed) {
        List<String> out = new ArrayList<>(keys.length + added.size());
        for (String k : keys) {
            if (!removed.contains(k)) {
                out.add(k);
            }
        }
        out.addAll(added);
        return of(out);
    }

    @Override
    public String get(int index) {
        return keys[index];
    }

    @Override
    public int size() {
        return keys.length;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object o) {
        if (o instanceof PolicyKeys other) {
            return other.hash == hash && Arrays.equals(other.keys, keys);
        }
        return super.equals(o);
    }

    /** The instances pods hold, one per distinct combination, dropped when no pod holds it. */
    static final class Interned {
        private final Map<PolicyKeys, PolicyKeys> instances = new HashMap<>();

        /** The interned instance equal to {@code keys}, now held {@code pods} times more. */
        PolicyKeys hold(PolicyKeys keys, int pods) {
            if (keys.keys.length == 0) {
                return EMPTY;
            }
            PolicyKeys held = instances.putIfAbsent(keys, keys);
            if (held == null) {
                held = keys;
            }
            held.holders += pods;
            return held;
        }

        /** An interned instance is held {@code pods} times less. */
        void release(PolicyKeys held, int pods) {
            if (held.keys.length == 0) {
                return;
            }
            held.holders -= pods;
            if (held.holders == 0) {
                instances.remove(held);
            }
        }

        /** Distinct combinations held (for tests). */
        int size() {
            return instances.size();
        }
    }
}
