// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The latest published snapshot of every node and who wants to hear about changes. Only the event
 * thread publishes; subscribers read the current version whenever they are ready to send, so a
 * burst of publications collapses into one diff for a slow subscriber.
 */
public final class SnapshotHub {
    /** How many recent (version, event time) pairs a node remembers for latency attribution. */
    private static final int HISTORY = 256;

    private final Map<String, NodeChannel> nodes = new ConcurrentHashMap<>();
    /** Serialises a publication against the making of current snapshots (see {@link #publish(List, List, Collection, long)}). */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private final SharedSets<NodeChannel> sharedSets = new SharedSets<>();
    private final CopyOnWriteArraySet<Runnable> readyListeners = new CopyOnWriteArraySet<>();
    private volatile boolean ready;
    private volatile String sourceRevision = "";
    private volatile Set<String> clusterNodes; // null: not told (a hub without a source): every name is accepted
    private long nextVersion = 1; // event thread only

    /** Publishes a node's new snapshot; called on the event thread only. */
    public void publish(NodeSnapshot snapshot, long eventTimeUnixNanos) {
        publish(List.of(snapshot), List.of(), List.of(), eventTimeUnixNanos);
    }

    /**
     * Publishes one calculation batch (event thread only): the nodes' new snapshots (as {@link
     * io.kubeverdict.controlplane.calc.PolicyCalculator#publishableSnapshot} makes them), the sets
     * dropped, then the sets whose members changed (see {@link
     * io.kubeverdict.controlplane.calc.PolicyCalculator#drainChanges}), which every node listing
     * them gets without a snapshot of its own: its current snapshot ({@link #current}) is its
     * published one with those sets replaced, made when asked. Readers see the batch whole or not
     * at all, so no node is ever seen with its old snapshot and new sets (a state the calculation
     * never had). Wakes the subscribers of every node it changes.
     */
    public void publish(
            List<NodeSnapshot> snapshots,
            List<SetChange> changedSets,
            Collection<String> droppedSets,
            long eventTimeUnixNanos) {
        List<NodeChannel> woken = new ArrayList<>(snapshots.size());
        List<Set<NodeChannel>> reached = List.of();
        lock.writeLock().lock();
        try {
            for (NodeSnapshot snapshot : snapshots) {
                // Marked published inside compute(), so a concurrent last unsubscribe cannot drop it.
                NodeChannel ch = nodes.compute(snapshot.getNode(), (node, c) -> {
                    NodeChannel out = c == null ? new NodeChannel(node) : c;
                    out.published = true;
                    return out;
                });
                IndexedSnapshot indexed = IndexedSnapshot.of(snapshot, nextVersion++, eventTimeUnixNanos);
                sharedSets.listed(ch, ch.published().snapshot(), snapshot);
                ch.publish(indexed);
                woken.add(ch);
            }
            if (!changedSets.isEmpty() || !droppedSets.isEmpty()) {
                reached = sharedSets.changed(changedSets, droppedSets, nextVersion++, eventTimeUnixNanos);
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (ready) {
            woken.forEach(ch -> ch.listeners.forEach(Runnable::run));
            // The users sets are the event thread's alone: read here, after the lock, safely.
            reached.forEach(nodesOfSet -> nodesOfSet.forEach(ch -> ch.listeners.forEach(Runnable::run)));
        }
    }

    /**
     * Every snapshot computed from this source revision has been published (event thread only).
     * Wakes every subscriber, so each stream records that it has sent that revision even when its
     * node did not change.
     */
    public void publishSourceRevision(String revision) {
        sourceRevision = revision;
        if (ready) {
            nodes.values().forEach(ch -> ch.listeners.forEach(Runnable::run));
        }
    }

    /**
     * The nodes the cluster has (Node objects and nodes pods are placed on), told by the event
     * thread with every change and before {@link #markReady}.
     */
    public void publishClusterNodes(Set<String> nodes) {
        clusterNodes = Set.copyOf(nodes);
    }

    /**
     * Whether a Sync for this node may be served: the cluster has it, or the calculation has
     * published a snapshot of it. True for every name while no cluster nodes were told.
     */
    public boolean inCluster(String node) {
        Set<String> known = clusterNodes;
        return known == null || known.contains(node) || isKnown(node);
    }

    /** The newest source revision whose snapshots are all published ("" when none). */
    public String sourceRevision() {
        return sourceRevision;
    }

    /** The first full calculation is done: subscribers may now send snapshots and InSync. */
    public void markReady() {
        ready = true;
        readyListeners.forEach(Runnable::run);
        nodes.values().forEach(ch -> ch.listeners.forEach(Runnable::run));
    }

    public boolean isReady() {
        return ready;
    }

    public void onReady(Runnable listener) {
        readyListeners.add(listener);
        if (ready) {
            listener.run();
        }
    }

    /** The node's latest snapshot; an empty version-0 snapshot for a node never published. */
    public IndexedSnapshot current(String node) {
        NodeChannel ch = nodes.get(node);
        return ch == null ? IndexedSnapshot.empty(node) : current(ch);
    }

    /**
     * The channel's published snapshot with the sets changed since applied, made once per
     * (publication, set version) and kept: the subscribers of a node share it. What to replace
     * is read under the lock; the replacing protos are built after it (once per set content), so
     * that the event thread never waits for a copy of a large set.
     */
    private IndexedSnapshot current(NodeChannel ch) {
        IndexedSnapshot published;
        long setsVersion;
        List<SharedSets.Replacement> replacements;
        lock.readLock().lock();
        try {
            published = ch.published();
            setsVersion = sharedSets.version();
            Current c = ch.current;
            if (c != null && c.published == published && c.setsVersion == setsVersion) {
                return c.snapshot;
            }
            replacements = sharedSets.replacements(published.snapshot());
        } finally {
            lock.readLock().unlock();
        }
        IndexedSnapshot s = SharedSets.apply(published, replacements);
        ch.current = new Current(published, setsVersion, s); // racing readers make equal ones
        return s;
    }

    /** The calculator's changes of the sets published here, for {@link SnapshotDiff}. */
    SetHistory setHistory() {
        return (from, to) -> {
            lock.readLock().lock();
            try {
                return sharedSets.path(from, to);
            } finally {
                lock.readLock().unlock();
            }
        };
    }

    /**
     * Whether the calculation has ever published a snapshot of this node (it is, or was, in the
     * cluster). Names that agents merely asked for are not known.
     */
    public boolean isKnown(String node) {
        NodeChannel ch = nodes.get(node);
        return ch != null && ch.published;
    }

    /** Every known node's latest snapshot (nodes that once had endpoints included, possibly empty now). */
    public List<IndexedSnapshot> all() {
        List<IndexedSnapshot> out = new ArrayList<>();
        nodes.values().forEach(ch -> {
            if (ch.published) {
                out.add(current(ch));
            }
        });
        return out;
    }

    /**
     * When the earliest change after {@code fromVersion} up to {@code toVersion} was seen: the event
     * time a delta from one to the other carries (0 when unknown).
     */
    public long earliestEventTime(String node, long fromVersion, long toVersion) {
        NodeChannel ch = nodes.get(node);
        if (ch == null) {
            return 0;
        }
        lock.readLock().lock();
        try {
            return sharedSets.earliestAfter(
                    ch.published().snapshot(), fromVersion, toVersion, ch.earliestAfter(fromVersion, toVersion));
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Calls {@code listener} (on the publishing thread; keep it short) whenever the node changes. */
    public void subscribe(String node, Runnable listener) {
        nodes.compute(node, (n, c) -> {
            NodeChannel out = c == null ? new NodeChannel(n) : c;
            out.listeners.add(listener);
            return out;
        });
    }

    /** The last listener of a node never published takes its entry with it: names from clients leave no state. */
    public void unsubscribe(String node, Runnable listener) {
        nodes.computeIfPresent(node, (n, c) -> {
            c.listeners.remove(listener);
            return c.published || !c.listeners.isEmpty() ? c : null;
        });
    }

    /** Entries held (known nodes plus names with subscribers); for tests of bounded state. */
    int entries() {
        return nodes.size();
    }

    /** Sets whose changes are kept for the nodes listing them; for tests of bounded state. */
    int sharedSetEntries() {
        lock.readLock().lock();
        try {
            return sharedSets.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** A node's current snapshot and what it was made from. */
    private record Current(IndexedSnapshot published, long setsVersion, IndexedSnapshot snapshot) {}

    private static final class NodeChannel {
        final CopyOnWriteArraySet<Runnable> listeners = new CopyOnWriteArraySet<>();
        volatile boolean published;
        /** The last snapshot published for the node (sets changed since are in {@link #sharedSets}). */
        private volatile IndexedSnapshot publishedSnapshot;

        volatile Current current;
        private final long[] versions = new long[HISTORY];
        private final long[] times = new long[HISTORY];
        private int count;

        NodeChannel(String node) {
            publishedSnapshot = IndexedSnapshot.empty(node);
        }

        IndexedSnapshot published() {
            return publishedSnapshot;
        }

        synchronized void publish(IndexedSnapshot s) {
            int slot = count++ % HISTORY;
            versions[slot] = s.version();
            times[slot] = s.eventTimeUnixNanos();
            publishedSnapshot = s;
        }

        synchronized long earliestAfter(long from, long to) {
            long best = 0;
            int n = Math.min(count, HISTORY);
            for (int i = 0; i < n; i++) {
                long v = versions[i];
                long t = times[i];
                if (t == 0) {
                    continue;
                }
                if (v > from && v <= to && (best == 0 || t < best)) {
                    best = t;
                }
            }
            return best;
        }
    }
}
