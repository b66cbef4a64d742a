// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.IpSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The IP sets of two snapshots paired by id (for {@link IndexUpdate}): those that are not the same
 * message instance, and those gone, with the member counts that decide whether diffing pays.
 */
final class SetPairs {
    final List<IpSet> changed = new ArrayList<>();
    final List<IpSet> changedOld = new ArrayList<>(); // null: a new set
    final List<IpSet> removed = new ArrayList<>();
    long allMembers;
    long changedMembers;

    /** Null when an id repeats. One walk when both lists are ordered by id (the agent's are). */
    static SetPairs of(List<IpSet> before, List<IpSet> now) {
        SetPairs p = new SetPairs();
        for (IpSet set : now) {
            p.allMembers += set.getMembersCount();
        }
        if (strictlyOrdered(before) && strictlyOrdered(now)) {
            int i = 0;
            int j = 0;
            while (i < before.size() || j < now.size()) {
                int c = i == before.size()
                        ? 1
                        : j == now.size()
                                ? -1
                                : before.get(i).getId().compareTo(now.get(j).getId());
                if (c < 0) {
                    p.gone(before.get(i++));
                } else if (c > 0) {
                    p.pair(null, now.get(j++));
                } else {
                    p.pair(before.get(i++), now.get(j++));
                }
            }
            return p;
        }
        Map<String, IpSet> old = new HashMap<>();
        for (IpSet set : before) {
            if (old.put(set.getId(), set) != null) {
                return null;
            }
        }
        Set<String> seen = new HashSet<>();
        for (IpSet set : now) {
            if (!seen.add(set.getId())) {
                return null;
            }
            p.pair(old.get(set.getId()), set);
        }
        for (IpSet set : before) {
            if (!seen.contains(set.getId())) {
                p.gone(set);
            }
        }
        return p;
    }

    private void pair(IpSet old, IpSet set) {
        if (old != set) {
            changed.add(set);
            changedOld.add(old);
            changedMembers += set.getMembersCount() + (old == null ? 0 : old.getMembersCount());
        }
    }

    private void gone(IpSet old) {
        removed.add(old);
        changedMembers += old.getMembersCount();
    }

    private static boolean strictlyOrdered(List<IpSet> sets) {
        for (int i = 1; i < sets.size(); i++) {
            if (sets.get(i - 1).getId().compareTo(sets.get(i).getId()) >= 0) {
                return false;
            }
        }
        return true;
    }
}
