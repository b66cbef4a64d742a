// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The current content of the IP sets that published node snapshots list, for set changes
 * published once for every node ({@link SnapshotHub#publish(List, List, long)}): a node's current
 * snapshot is its published one with each listed set whose entry here is newer replaced by the
 * entry's proto. Only sets some published snapshot lists have an entry. Writes (the event
 * thread) and {@link #materialise} are serialised by the hub's lock; {@link #users} is the event
 * thread's alone.
 *
 * @param <N> the hub's per-node channel
 */
final class SharedSets<N> {
    /** How many recent (version, event time) pairs a set remembers for latency attribution. */
    private static final int HISTORY = 16;

    /** A set's current proto, the version that published it, and its recent changes. */
    private static final class Entry {
        IpSet proto;
        long version;
        private final long[] versions = new long[HISTORY];
        private final long[] times = new long[HISTORY];
        private int count;

        void changed(IpSet to, long at, long eventTime) {
            proto = to;
            version = at;
            int slot = count++ % HISTORY;
            versions[slot] = at;
            times[slot] = eventTime;
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
     * each set, and drops the entries of sets no published snapshot lists any more. Event thread,
     * under the hub's write lock.
     */
    void listed(N node, NodeSnapshot before, NodeSnapshot after) {
        if (before.getIpSetsList() == after.getIpSetsList()) {
            return;
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
                    entries.remove(s.getId());
                }
            }
        }
    }

    /**
     * Sets whose members changed, published at {@code at}; returns, per set, the nodes that list
     * it (a node listing several is in several: waking it twice is harmless, and merging them
     * would cost a hash insertion per node). Sets no node lists are not kept: a snapshot that
     * lists one later brings its content. Event thread, under the hub's write lock.
     */
    List<Set<N>> changed(List<IpSet> sets, long at, long eventTime) {
        List<Set<N>> reached = new ArrayList<>(sets.size());
        for (IpSet s : sets) {
            Set<N> u = users.get(s.getId());
            if (u == null) {
                continue;
            }
            entries.computeIfAbsent(s.getId(), k -> new Entry()).changed(s, at, eventTime);
            reached.add(u);
        }
        version = at;
        return reached;
    }

    /**
     * The node's current snapshot: {@code published} with the sets changed after it replaced,
     * as a new version (the newest of those changes) when one was; {@code published} itself when
     * none was. Under the hub's read lock.
     */
    IndexedSnapshot materialise(IndexedSnapshot published) {
        NodeSnapshot s = published.snapshot();
        NodeSnapshot.Builder b = null;
        long newest = published.version();
        for (int i = 0; i < s.getIpSetsCount(); i++) {
            IpSet listed = s.getIpSets(i);
            Entry e = entries.get(listed.getId());
            if (e == null || e.version <= published.version() || e.proto == listed) {
                continue; // the published snapshot was built with this content or a newer one
            }
            if (b == null) {
                b = s.toBuilder();
            }
            b.setIpSets(i, e.proto);
            newest = Math.max(newest, e.version);
        }
        return b == null ? published : IndexedSnapshot.of(b.build(), newest, published.eventTimeUnixNanos());
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
