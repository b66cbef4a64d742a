// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The members only in the old list, and only in the new one, each once (for {@link IndexUpdate}). */
record MemberDiff(List<String> removed, List<String> added) {
    static MemberDiff of(List<String> old, List<String> now) {
        if (isSorted(old) && isSorted(now)) {
            return merge(old, now);
        }
        Set<String> before = new HashSet<>(old);
        Set<String> after = new HashSet<>(now);
        List<String> removed = new ArrayList<>();
        for (String m : before) {
            if (!after.contains(m)) {
                removed.add(m);
            }
        }
        List<String> added = new ArrayList<>();
        for (String m : after) {
            if (!before.contains(m)) {
                added.add(m);
            }
        }
        return new MemberDiff(removed, added);
    }

    private static boolean isSorted(List<String> members) {
        for (int i = 1; i < members.size(); i++) {
            if (members.get(i - 1).compareTo(members.get(i)) > 0) {
                return false;
            }
        }
        return true;
    }

    /** One walk over two sorted lists (the agent's snapshots keep members sorted). */
    private static MemberDiff merge(List<String> old, List<String> now) {
        List<String> removed = new ArrayList<>();
        List<String> added = new ArrayList<>();
        int i = 0;
        int j = 0;
        while (i < old.size() || j < now.size()) {
            int c = i == old.size() ? 1 : j == now.size() ? -1 : old.get(i).compareTo(now.get(j));
            String m = c <= 0 ? old.get(i) : now.get(j);
            if (c < 0) {
                removed.add(m);
            } else if (c > 0) {
                added.add(m);
            }
            // Skip every copy of m on both sides.
            while (i < old.size() && old.get(i).equals(m)) {
                i++;
            }
            while (j < now.size() && now.get(j).equals(m)) {
                j++;
            }
        }
        return new MemberDiff(removed, added);
    }
}
