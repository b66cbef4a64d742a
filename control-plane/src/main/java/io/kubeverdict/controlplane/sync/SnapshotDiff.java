// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import com.google.protobuf.CodedOutputStream;
import io.kubeverdict.controlplane.calc.SetChange;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyRemove;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetRemove;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpointRemove;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.Set;

/**
 * The messages that take an agent from one snapshot to another: the node's own part first (a
 * NodeUpdate when its pod ranges changed, an empty one when they went away), then adds and
 * updates (IP sets,
 * then policies, then endpoints) so that nothing refers to an object the agent does not have yet,
 * then removes in the reverse order (endpoints, then policies, then IP sets) so that nothing is
 * removed while still referred to. A changed IP set travels as added/removed members (or whole,
 * when that is smaller and fits in one message); a set new to the agent and too large for one
 * message is split into an update followed by delta updates, each below the budget.
 * Deterministic and free of I/O; sequence numbers and event times are the sender's business (left 0
 * here). Thread-safe: one instance serves every subscriber. The messages for a shared IP set (its
 * content, or its transition from one instance to the next) are computed once and handed to every
 * stream as the same {@link Payload}, so they are also serialized once.
 */
public final class SnapshotDiff {
    /** Room kept in every chunk for the envelope (sequence, event time, tags, set id). */
    private static final int ENVELOPE_BYTES = 64;

    /** How many recent IP-set transitions and contents to remember. */
    private static final int SET_MEMO = 32; // entries pin sets: keep few

    private final int maxMessageBytes;
    private final SetHistory history;
    /**
     * The messages for recent (old set, new set) transitions, by identity. The calculator hands the
     * same IpSet instance to every node that uses the set, so when a cluster-wide set changes,
     * every subscriber asks for the same transition: it is computed once, not once per agent.
     */
    private final Memo<SetTransition> transitions = new Memo<>();
    /** The messages that send a set whole (a new agent's snapshot, a set new to the node), by identity. */
    private final Memo<SameSet> contents = new Memo<>();
    /** Message lists computed (not served from a memo); for tests. */
    private final java.util.concurrent.atomic.AtomicLong computed = new java.util.concurrent.atomic.AtomicLong();

    /** Identity pair of two IpSet instances. */
    private record SetTransition(IpSet from, IpSet to) {
        @Override
        public boolean equals(Object o) {
            return o instanceof SetTransition t && t.from == from && t.to == to;
        }

        @Override
        public int hashCode() {
            return 31 * System.identityHashCode(from) + System.identityHashCode(to);
        }
    }

    /** One IpSet instance (IpSet.equals compares content). */
    private record SameSet(IpSet set) {
        @Override
        public boolean equals(Object o) {
            return o instanceof SameSet s && s.set == set;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(set);
        }
    }

    /**
     * Recently asked message lists, each computed by the first sender that asks; senders asking
     * for it meanwhile wait for that result instead of computing it again.
     */
    private final class Memo<K> {
        private final Map<K, Entry> recent = new java.util.LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, Entry> eldest) {
                return size() > SET_MEMO;
            }
        };

        private final class Entry {
            private List<Payload> messages; // guarded by this
        }

        List<Payload> get(K key, java.util.function.Consumer<List<Payload>> compute) {
            Entry e;
            synchronized (recent) {
                e = recent.computeIfAbsent(key, k -> new Entry());
            }
            synchronized (e) {
                if (e.messages == null) {
                    List<Payload> out = new ArrayList<>();
                    compute.accept(out);
                    computed.incrementAndGet();
                    e.messages = List.copyOf(out);
                }
                return e.messages;
            }
        }
    }

    /** @param maxMessageBytes upper bound for one serialized IP-set message (gRPC's default limit is 4 MiB) */
    public SnapshotDiff(int maxMessageBytes) {
        this(maxMessageBytes, SetHistory.NONE);
    }

    /**
     * @param history the calculator's set changes: a set's transition is their composed delta
     *     when they are kept, else found by comparing the two contents
     */
    SnapshotDiff(int maxMessageBytes, SetHistory history) {
        if (maxMessageBytes < 1024) {
            throw new IllegalArgumentException("maxMessageBytes too small: " + maxMessageBytes);
        }
        this.maxMessageBytes = maxMessageBytes;
        this.history = history;
    }

    List<Payload> diff(IndexedSnapshot from, IndexedSnapshot to) {
        // The calculator hands unchanged parts over as the same instances, so a kind whose list
        // holds the same instances in the same order has neither updates nor removes: skip it
        // without building or probing its index (the common case: a set-only change).
        NodeSnapshot a = from.snapshot();
        NodeSnapshot b = to.snapshot();
        boolean setsSame = sameInstances(a.getIpSetsList(), b.getIpSetsList());
        boolean policiesSame = sameInstances(a.getPoliciesList(), b.getPoliciesList());
        boolean endpointsSame = sameInstances(a.getEndpointsList(), b.getEndpointsList());
        List<Payload> out = new ArrayList<>();
        nodeChange(a, b, out);
        boolean setsById = !setsSame && sameIdsAscending(a.getIpSetsList(), b.getIpSetsList());
        if (setsById) {
            // The calculator's case: the node uses the same sets (listed by id) and some changed.
            // Pair them by position: no index to build, nothing to remove.
            for (int i = 0; i < b.getIpSetsCount(); i++) {
                setChange(a.getIpSets(i), b.getIpSets(i), out);
            }
        } else if (!setsSame) {
            for (IpSet set : to.ipSets().values()) {
                setChange(from.ipSets().get(set.getId()), set, out);
            }
        }
        if (!policiesSame) {
            for (ActivePolicy p : to.policies().values()) {
                ActivePolicy old = from.policies().get(IndexedSnapshot.key(p.getId()));
                if (old == null || (old != p && !old.equals(p))) {
                    out.add(new Payload(ToAgent.newBuilder()
                            .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                                    .setId(p.getId())
                                    .setPolicy(p.getPolicy()))
                            .build()));
                }
            }
        }
        if (!endpointsSame) {
            for (Endpoint e : to.endpoints().values()) {
                Endpoint old = from.endpoints().get(IndexedSnapshot.key(e.getId()));
                if (old == null || (old != e && !old.equals(e))) {
                    out.add(new Payload(ToAgent.newBuilder()
                            .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                                    .setId(e.getId())
                                    .setEndpoint(e.getEndpoint()))
                            .build()));
                }
            }
            for (String key : reversed(from.endpoints())) {
                if (!to.endpoints().containsKey(key)) {
                    out.add(new Payload(ToAgent.newBuilder()
                            .setWorkloadEndpointRemove(WorkloadEndpointRemove.newBuilder()
                                    .setId(from.endpoints().get(key).getId()))
                            .build()));
                }
            }
        }
        if (!policiesSame) {
            for (String key : reversed(from.policies())) {
                if (!to.policies().containsKey(key)) {
                    out.add(new Payload(ToAgent.newBuilder()
                            .setActivePolicyRemove(ActivePolicyRemove.newBuilder()
                                    .setId(from.policies().get(key).getId()))
                            .build()));
                }
            }
        }
        if (!setsSame && !setsById) {
            for (String id : reversed(from.ipSets())) {
                if (!to.ipSets().containsKey(id)) {
                    out.add(new Payload(ToAgent.newBuilder()
                            .setIpSetRemove(IpSetRemove.newBuilder().setId(id))
                            .build()));
                }
            }
        }
        return out;
    }

    /**
     * A NodeUpdate when the node's pod ranges differ (from an empty snapshot: when it has any).
     * First, so the agent knows its ranges before the endpoints in them arrive.
     */
    private static void nodeChange(NodeSnapshot from, NodeSnapshot to, List<Payload> out) {
        if (!from.getPodCidrsList().equals(to.getPodCidrsList())) {
            out.add(new Payload(ToAgent.newBuilder()
                    .setNodeUpdate(NodeUpdate.newBuilder().addAllPodCidrs(to.getPodCidrsList()))
                    .build()));
        }
    }

    /** The messages that take the agent's copy of a set (null: none) to {@code set}. */
    private void setChange(IpSet old, IpSet set, List<Payload> out) {
        if (old == null || old.getType() != set.getType()) {
            out.addAll(contents.get(new SameSet(set), msgs -> fullSet(set, msgs)));
        } else if (old != set && !old.equals(set)) {
            out.addAll(transitions.get(new SetTransition(old, set), msgs -> changedSet(old, set, msgs)));
        }
    }

    /**
     * Same size and the same ids at every position, in strictly ascending order (so each id is
     * there once): then sets pair up by position exactly as they would by id.
     */
    static boolean sameIdsAscending(List<IpSet> a, List<IpSet> b) {
        if (a.size() != b.size()) {
            return false;
        }
        String previous = null;
        for (int i = 0; i < a.size(); i++) {
            String id = b.get(i).getId();
            if (!id.equals(a.get(i).getId()) || (previous != null && previous.compareTo(id) >= 0)) {
                return false;
            }
            previous = id;
        }
        return true;
    }

    /** Same size and the same instance at every position. */
    static boolean sameInstances(List<?> a, List<?> b) {
        if (a == b) {
            return true;
        }
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i) != b.get(i)) {
                return false;
            }
        }
        return true;
    }

    private void fullSet(IpSet set, List<Payload> out) {
        List<List<String>> chunks = chunk(set.getId(), set.getMembersList());
        out.add(new Payload(ToAgent.newBuilder()
                .setIpSetUpdate(IpSetUpdate.newBuilder()
                        .setId(set.getId())
                        .setType(set.getType())
                        .addAllMembers(chunks.get(0)))
                .build()));
        for (int i = 1; i < chunks.size(); i++) {
            out.add(delta(set.getId(), chunks.get(i), List.of()));
        }
    }

    /** How many message lists were computed rather than taken from a memo (for tests). */
    long computedLists() {
        return computed.get();
    }

    private void changedSet(IpSet old, IpSet set, List<Payload> out) {
        List<String> added = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        int distinctAfter;
        SetChange all = composed(history.path(old, set));
        if (all != null) {
            // The calculator's changes between the two: what they added and removed in all, as the walk would find.
            added.addAll(all.added());
            removed.addAll(all.removed());
            distinctAfter = set.getMembersCount();
        } else if (strictlyAscending(old.getMembersList()) && strictlyAscending(set.getMembersList())) {
            mergeDifference(old.getMembersList(), set.getMembersList(), added, removed);
            distinctAfter = set.getMembersCount();
        } else {
            Set<String> before = new HashSet<>(old.getMembersList());
            Set<String> after = new HashSet<>(set.getMembersList());
            for (String m : set.getMembersList()) {
                if (!before.contains(m)) {
                    added.add(m);
                }
            }
            for (String m : old.getMembersList()) {
                if (!after.contains(m)) {
                    removed.add(m);
                }
            }
            distinctAfter = after.size();
        }
        if (added.isEmpty() && removed.isEmpty()) {
            return; // same members in another order: nothing for the agent to do
        }
        if (added.size() + removed.size() >= distinctAfter && fitsInOneMessage(set)) {
            fullSet(set, out); // a replacement is no larger than the delta, and atomic
            return;
        }
        // A replacement in chunks would leave the agent's set as its first chunk until the rest
        // arrives: an agent that enforces before the change is complete (one that ignores change
        // boundaries) would drop members that are in the set before and after. Deltas change
        // each member at most once, from what it was to what it will be; they cost at most the
        // old set's size more, which this agent once received whole anyway.
        // Removals first, so that a member never counts twice for the agent.
        for (List<String> c : chunk(set.getId(), removed)) {
            if (!c.isEmpty()) {
                out.add(delta(set.getId(), List.of(), c));
            }
        }
        for (List<String> c : chunk(set.getId(), added)) {
            if (!c.isEmpty()) {
                out.add(delta(set.getId(), c, List.of()));
            }
        }
    }

    /** The changes one after the other as one change; null when there are none or they do not join up. */
    private static SetChange composed(List<SetChange> path) {
        if (path == null || path.isEmpty()) {
            return null;
        }
        SetChange all = path.get(0);
        for (int i = 1; i < path.size() && all.from() != null; i++) {
            all = all.then(path.get(i));
        }
        return all.from() == null ? null : all; // an unknown delta: the walk finds it
    }

    /** Members are listed sorted by the calculator (its set versions are sorted). */
    static boolean strictlyAscending(List<String> members) {
        for (int i = 1; i < members.size(); i++) {
            if (members.get(i - 1).compareTo(members.get(i)) >= 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * One walk over two strictly ascending lists: what is only in {@code after} (in its order)
     * and what is only in {@code before} (in its order), as the hashing path finds them.
     */
    static void mergeDifference(List<String> before, List<String> after, List<String> added, List<String> removed) {
        int i = 0;
        int j = 0;
        while (i < before.size() && j < after.size()) {
            String b = before.get(i);
            String a = after.get(j);
            int c = b.compareTo(a);
            if (c == 0) {
                i++;
                j++;
            } else if (c < 0) {
                removed.add(b);
                i++;
            } else {
                added.add(a);
                j++;
            }
        }
        removed.addAll(before.subList(i, before.size()));
        added.addAll(after.subList(j, after.size()));
    }

    private static Payload delta(String id, List<String> added, List<String> removed) {
        return new Payload(ToAgent.newBuilder()
                .setIpSetDeltaUpdate(IpSetDeltaUpdate.newBuilder()
                        .setId(id)
                        .addAllAddedMembers(added)
                        .addAllRemovedMembers(removed))
                .build());
    }

    /** Whether the set's content goes in one IpSetUpdate (then replacing it is atomic). */
    private boolean fitsInOneMessage(IpSet set) {
        return chunk(set.getId(), set.getMembersList()).size() == 1;
    }

    /** Splits members into runs whose encoding stays within the budget; always at least one run. */
    private List<List<String>> chunk(String id, List<String> members) {
        int budget = maxMessageBytes - ENVELOPE_BYTES - CodedOutputStream.computeStringSize(1, id);
        List<List<String>> chunks = new ArrayList<>();
        int start = 0;
        int size = 0;
        for (int i = 0; i < members.size(); i++) {
            int cost = CodedOutputStream.computeStringSize(3, members.get(i));
            if (size + cost > budget && i > start) {
                chunks.add(members.subList(start, i));
                start = i;
                size = 0;
            }
            size += cost;
        }
        chunks.add(members.subList(start, members.size()));
        return chunks;
    }

    private static <K> List<K> reversed(Map<K, ?> map) {
        List<K> keys = new ArrayList<>(map.keySet());
        List<K> rev = new ArrayList<>(keys.size());
        for (ListIterator<K> it = keys.listIterator(keys.size()); it.hasPrevious(); ) {
            rev.add(it.previous());
        }
        return rev;
    }
}
