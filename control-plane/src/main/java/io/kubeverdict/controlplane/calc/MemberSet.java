// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One live IP set in {@link ClusterIndex}, whatever its members come from (pods: {@link IpSetState},
 * nodes: {@link NodeSetState}): members with reference counts (two objects may report one
 * address) and the policies using it (the set lives while one does). Mutated by the index only.
 *
 * <p>The content others read is a {@link SetVersion}, made from the previous one and the net
 * additions and removals since (a member whose count crosses 0 or 1), when someone asks: a
 * change costs what it changed, not the set's size.
 */
abstract class MemberSet {
    final String id;
    final Set<PolicyState> users = new HashSet<>();
    /** Member -> how many objects contribute it (made to size when a new set is filled). */
    private Map<String, Integer> counts = new HashMap<>();
    /** Net changes since {@link #current}: members it lacks that are now in, and ones it has that are out. */
    private Set<String> pendingAdded = new HashSet<>();

    private Set<String> pendingRemoved = new HashSet<>();
    private SetVersion current;
    /** The version last reported by {@link #drain} (null: none), and the net changes since it. */
    private SetVersion drained;

    private Set<String> addedSinceDrained = new HashSet<>();
    private Set<String> removedSinceDrained = new HashSet<>();
    /** The newest proto a node snapshot listed (assembly bookkeeping of {@link NodeSnapshots}). */
    IpSet listed;
    /**
     * When the members last changed, as a count of {@link NodeSnapshots}' set changes: a node
     * snapshot built before that lists a stale proto of this set (assembly bookkeeping).
     */
    long membersChangedAt;

    MemberSet(String id) {
        this.id = id;
    }

    abstract IpSetType type();

    /**
     * A new set's members, all at once: counted in a table made to size, and its first version
     * made from them sorted, without a change's bookkeeping of each member ({@link #addMembers}
     * and {@link #version}); the same content as adding them one by one.
     */
    void fill(List<String> contributed) {
        if (!counts.isEmpty() || current != null) {
            throw new IllegalStateException("only a new set is filled: " + id);
        }
        counts = new HashMap<>((int) (contributed.size() / 0.75f) + 1);
        List<String> distinct = new ArrayList<>(contributed.size());
        for (String m : contributed) {
            if (counts.merge(m, 1, Integer::sum) == 1) {
                distinct.add(m);
            }
        }
        distinct.sort(null);
        current = new SetVersion(id, type(), SortedMembers.EMPTY.with(distinct, List.of()));
    }

    void addMembers(List<String> contributed) {
        for (String m : contributed) {
            if (counts.merge(m, 1, Integer::sum) == 1 && !pendingRemoved.remove(m)) {
                pendingAdded.add(m);
            }
        }
    }

    void removeMembers(List<String> contributed) {
        for (String m : contributed) {
            if (!counts.containsKey(m)) {
                continue; // not a member: nothing to take back
            }
            Integer left = counts.computeIfPresent(m, (k, v) -> v == 1 ? null : v - 1);
            if (left == null && !pendingAdded.remove(m)) {
                pendingRemoved.add(m);
            }
        }
    }

    /** The current content, a new version when members changed since the last one was made. */
    SetVersion version() {
        if (current == null) {
            current = new SetVersion(id, type(), SortedMembers.EMPTY);
        }
        if (pendingAdded.isEmpty() && pendingRemoved.isEmpty()) {
            return current;
        }
        List<String> added = sorted(pendingAdded);
        List<String> removed = sorted(pendingRemoved);
        current = current.with(added, removed);
        if (drained != null) {
            fold(added, addedSinceDrained, removedSinceDrained);
            fold(removed, removedSinceDrained, addedSinceDrained);
        }
        // A bulk load grew these tables: replaced, not cleared, so later small changes do not pay for them.
        pendingAdded = added.size() > 64 ? new HashSet<>() : cleared(pendingAdded);
        pendingRemoved = removed.size() > 64 ? new HashSet<>() : cleared(pendingRemoved);
        return current;
    }

    /**
     * The change since the last drain (from its version to the current one) and the current
     * version as the start of the next. For {@link NodeSnapshots}' drain of changed sets.
     */
    SetChange drain() {
        SetVersion to = version();
        SetChange change = new SetChange(drained, to, sorted(addedSinceDrained), sorted(removedSinceDrained));
        drained = to;
        addedSinceDrained = change.added().size() > 64 ? new HashSet<>() : cleared(addedSinceDrained);
        removedSinceDrained = change.removed().size() > 64 ? new HashSet<>() : cleared(removedSinceDrained);
        return change;
    }

    /** Whether the current content was reported by a drain (then whoever took the drain has it). */
    boolean drainedCurrent() {
        return drained != null && drained == version();
    }

    /** One step's members folded into the net change since the drain: an undoing of the opposite, or new. */
    private static void fold(List<String> step, Set<String> same, Set<String> opposite) {
        for (String m : step) {
            if (!opposite.remove(m)) {
                same.add(m);
            }
        }
    }

    private static List<String> sorted(Set<String> members) {
        List<String> out = new ArrayList<>(members);
        out.sort(null);
        return out;
    }

    private static Set<String> cleared(Set<String> s) {
        s.clear();
        return s;
    }
}
