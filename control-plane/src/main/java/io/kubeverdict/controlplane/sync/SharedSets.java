// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.controlplane.calc.SetVersion;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The current content of every live IP set whose members changed since the hub began, for set
 * changes published once for every node ({@link SnapshotHub#publish(List, List, Collection,
 * long)}): a node's current snapshot is its published one with each listed set whose entry here
 * holds other content replaced by the entry's. A published snapshot may list a set with older
 * content than its entry (the calculator lists what it last listed when the newer content was
 * reported), so an entry lives until the calculator reports the set dropped, not while nodes list
 * it. Each entry also keeps its recent changes, from which {@link SetHistory} composes the delta
 * between two of its versions. Writes (the event thread) and reads are serialised by the hub's
 * lock; {@link #users} is the event thread's alone.
 *
 * @param <N> the hub's per-node channel
 */
final class SharedSets<N> {
    /** How many recent (version, event time) pairs a set remembers for latency attribution. */
    private static final int HISTORY = 16;
    /**
     * How many recent changes a set keeps for composed deltas. Each pins its two versions, and
     * with them their protos once built (a cluster-wide set's is its whole member list): keep few.
     * An agent further behind gets its delta from a walk of the two contents.
     */
    private static final int CHANGES = 8;

    /** A set's current content, the version that published it, and its recent changes. */
    private static final class Entry {
        SetVersion current;
        long version;
        private final SetChange[] changes = new SetChange[CHANGES];
        private final long[] versions = new long[HISTORY];
        private final long[] times = new long[HISTORY];
        private int count;

        void changed(SetChange change, long at, long eventTime) {
            if (change.from() == null || change.from() != current) {
                // Not a continuation of what is kept: the kept changes cannot reach the new content.
                Arrays.fill(changes, null);
            }
            current = change.to();
            version = at;
            changes[count % CHANGES] = change;
            int slot = count++ % HISTORY;
            versions[slot] = at;
            times[slot] = eventTime;
        }

        /** The kept changes that lead, one after the other, from {@code from}'s content to {@code to}'s; null: none. */
        List<SetChange> path(IpSet from, IpSet to) {
            List<SetChange> out = new ArrayList<>();
            SetVersion at = null; // the content the changes collected so far start from
            for (int i = 0; i < Math.min(count, CHANGES); i++) {
                SetChange c = changes[(count - 1 - i) % CHANGES];
                boolean continues = at == null ? c != null && c.to().builtProto() == to : c != null && c.to() == at;
                if (!continues || c.from() == null) {
                    return null;
                }
                out.add(c);
                at = c.from();
                if (at.builtProto() == from) {
                    Collections.reverse(out);
                    return out;
                }
            }
            return null;
        }

        long earliestAfter(long from, long to, long best) {
            for (int i = 0; i < Math.min(count, HISTORY); i++) {
                long t = times[i];
                if (t != 0 && versions[i] > from && versions[i] <= to && (best == 0 || t < best)) {
                    best = t;
                }
            }
            return best;
        }
    }

    /** A listed set to replace in a published snapshot: its position and the entry's content then. */
    record Replacement(int position, SetVersion content, long version) {}

    private final Map<String, Entry> entries = new HashMap<>();
    /** Per set id, the nodes whose published snapshot lists it (event thread only). */
    private final Map<String, Set<N>> users = new HashMap<>();
    /** The newest version {@link #changed} published (0: none); guarded by the hub's lock. */
    private long version;

    long version() {
        return version;
    }

    /**
     * A node's published snapshot went from {@code before} to {@code after}: keeps the users of
     * each set. Event thread, under the hub's write lock.
     */
    void listed(N node, NodeSnapshot before, NodeSnapshot after) {
        if (before.getIpSetsList() == after.getIpSetsList()
                || SnapshotDiff.sameIdsAscending(before.getIpSetsList(), after.getIpSetsList())) {
            return; // the same sets (a node rebuilt for its own parts): the same users
        }
        Set<String> now = new HashSet<>(after.getIpSetsCount() * 2);
        for (IpSet s : after.getIpSetsList()) {
            now.add(s.getId());
            users.computeIfAbsent(s.getId(), k -> new HashSet<>()).add(node);
        }
        for (IpSet s : before.getIpSetsList()) {
            if (!now.contains(s.getId())) {
                Set<N> u = users.get(s.getId());
                if (u != null && u.remove(node) && u.isEmpty()) {
                    users.remove(s.getId());
                }
            }
        }
    }

    /**
     * Sets dropped, then sets whose members changed, published at {@code at}; returns, per
     * changed set, the nodes that list it (a node listing several is in several: waking it twice
     * is harmless, and merging them would cost a hash insertion per node). Event thread, under
     * the hub's write lock.
     */
    List<Set<N>> changed(List<SetChange> sets, Collection<String> dropped, long at, long eventTime) {
        dropped.forEach(entries::remove);
        List<Set<N>> reached = new ArrayList<>(sets.size());
        for (SetChange s : sets) {
            entries.computeIfAbsent(s.id(), k -> new Entry()).changed(s, at, eventTime);
            Set<N> u = users.get(s.id());
            if (u != null) {
                reached.add(u);
            }
        }
        version = at;
        return reached;
    }

    /**
     * The listed sets of {@code published} whose entry may hold other content, with that
     * content: cheap, for under the hub's read lock; {@link #apply} builds the protos after it.
     */
    List<Replacement> replacements(NodeSnapshot published) {
        List<Replacement> out = new ArrayList<>();
        for (int i = 0; i < published.getIpSetsCount(); i++) {
            IpSet listed = published.getIpSets(i);
            Entry e = entries.get(listed.getId());
            if (e != null && e.current.builtProto() != listed) {
                out.add(new Replacement(i, e.current, e.version));
            }
        }
        return out;
    }

    /**
     * The node's current snapshot: {@code published} with the replacements made, as a new
     * version (the newest of those changes) when one changed something; {@code published} itself
     * when none did. Builds the replacing sets' protos (once per content), so call it outside the
     * hub's lock.
     */
    static IndexedSnapshot apply(IndexedSnapshot published, List<Replacement> replacements) {
        NodeSnapshot s = published.snapshot();
        NodeSnapshot.Builder b = null;
        long newest = published.version();
        for (Replacement r : replacements) {
            IpSet proto = r.content().proto();
            if (proto == s.getIpSets(r.position())) {
                continue;
            }
            if (b == null) {
                b = s.toBuilder();
            }
            b.setIpSets(r.position(), proto);
            newest = Math.max(newest, r.version());
        }
        return b == null ? published : IndexedSnapshot.of(b.build(), newest, published.eventTimeUnixNanos());
    }

    /**
     * The kept changes from the content {@code from} to the content {@code to} of one set, in
     * order (null: not kept, or not two versions of a kept set). Under the hub's read lock.
     */
    List<SetChange> path(IpSet from, IpSet to) {
        Entry e = entries.get(to.getId());
        return e == null ? null : e.path(from, to);
    }

    /**
     * The earliest event time of the changes of the sets the node lists published after {@code
     * from} up to {@code to} (0: none known), or {@code best} when that is earlier. Under the
     * hub's read lock.
     */
    long earliestAfter(NodeSnapshot published, long from, long to, long best) {
        for (IpSet listed : published.getIpSetsList()) {
            Entry e = entries.get(listed.getId());
            if (e != null && e.version > from) {
                best = e.earliestAfter(from, to, best);
            }
        }
        return best;
    }

    /** Sets with an entry (for tests of bounded state). */
    int size() {
        return entries.size();
    }

    /** Ids with users (for tests of bounded state). */
    List<String> listedIds() {
        return new ArrayList<>(users.keySet());
    }
}
