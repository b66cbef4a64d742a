// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A live set's content went from {@code from} to {@code to}: the members {@code added} and
 * {@code removed} on the way (net, each ascending, disjoint). {@code from} is null when the
 * set's earlier content was never reported (a set new since the last drain): then only {@code
 * to} says anything.
 */
public record SetChange(SetVersion from, SetVersion to, List<String> added, List<String> removed) {
    public SetChange {
        added = List.copyOf(added);
        removed = List.copyOf(removed);
    }

    public String id() {
        return to.id();
    }

    /**
     * This change followed by {@code next} (a later change of the same set) as one change: from
     * this one's {@code from} to {@code next}'s {@code to}. A member removed and added again (or
     * added and removed) on the way is in neither list. When {@code next} does not start where this
     * one ends, the history is unknown and so is the delta: {@code from} is null.
     */
    public SetChange then(SetChange next) {
        if (next.from == null || next.from != to || from == null) {
            return new SetChange(null, next.to, List.of(), List.of());
        }
        return new SetChange(
                from,
                next.to,
                composed(added, removed, next.added, next.removed),
                composed(removed, added, next.removed, next.added));
    }

    /**
     * What two consecutive deltas add (or, with the roles swapped, remove) in all: what the first
     * adds and the second does not remove, and what the second adds that the first did not
     * remove. Ascending, as both inputs are.
     */
    static List<String> composed(
            List<String> firstAdds, List<String> firstRemoves, List<String> secondAdds, List<String> secondRemoves) {
        Set<String> undone = new HashSet<>(secondRemoves);
        Set<String> restored = new HashSet<>(firstRemoves);
        List<String> out = new ArrayList<>(firstAdds.size() + secondAdds.size());
        int i = 0;
        int j = 0;
        while (i < firstAdds.size() || j < secondAdds.size()) {
            boolean takeFirst = j == secondAdds.size()
                    || (i < firstAdds.size() && firstAdds.get(i).compareTo(secondAdds.get(j)) < 0);
            if (takeFirst) {
                String m = firstAdds.get(i++);
                if (!undone.contains(m)) {
                    out.add(m);
                }
            } else {
                String m = secondAdds.get(j++);
                if (!restored.contains(m)) {
                    out.add(m);
                }
            }
        }
        return out;
    }
}
