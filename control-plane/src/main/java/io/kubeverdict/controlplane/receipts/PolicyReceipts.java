// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.policy.StagedText;
import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * Enforcement receipts: for every policy, the nodes whose snapshot holds it and which of them run
 * a snapshot that holds its newest generation. Pure bookkeeping (no clock, no I/O: times come in
 * as arguments), safe to call from any thread.
 *
 * <p>Versions are the {@code SnapshotHub}'s: they grow with every publication, so a node runs a
 * policy's generation once its agent has applied a snapshot version at least the first version of
 * that node published after the write (its <em>required</em> version). What feeds it:
 * <ul>
 *   <li>the event thread: each policy write or delete as it is applied ({@link #written},
 *       {@link #deleted}), each node snapshot as it is published ({@link #nodePublished}), and the
 *       end of each publication ({@link #publicationDone}), when a write's snapshots are all out
 *       and its nodes' required versions are set to their current ones;</li>
 *   <li>the sync service: each applied report, translated into the snapshot version the node's
 *       stream had sent up to the reported sequence ({@link #applied}).</li>
 * </ul>
 * A node's applied version is kept when its agent reconnects: the agent keeps enforcing what it
 * applied (and starts from it after a restart, --state-dir).
 */
public final class PolicyReceipts implements PolicySyncService.AppliedVersions {
    private final LongConsumer enforcedEverywhere;

    // Guarded by this.
    private final Map<PolicyRef, Tracked> policies = new HashMap<>();
    private final Set<Tracked> unpublished = new HashSet<>();
    /** Nodes of policies deleted since the last publication: a policy written again in the same burst keeps them. */
    private final Map<PolicyRef, Set<String>> deletedNodes = new HashMap<>();

    private final Map<String, Long> currentVersions = new HashMap<>();
    private final Map<String, Long> appliedVersions = new HashMap<>();
    private final Map<String, Set<PolicyRef>> nodePolicies = new HashMap<>();
    /** The policy list each node was last published with: an identical list (set-only change) is skipped. */
    private final Map<String, List<ActivePolicy>> lastLists = new HashMap<>();

    /** @param enforcedEverywhere told each write → enforced-on-every-node latency (nanos), once per generation */
    public PolicyReceipts(LongConsumer enforcedEverywhere) {
        this.enforcedEverywhere = enforcedEverywhere;
    }

    public PolicyReceipts() {
        this(latency -> {});
    }

    private static final class Need {
        final long version;
        final long since;

        Need(long version, long since) {
            this.version = version;
            this.since = since;
        }
    }

    private final class Tracked implements TrackedPolicy {
        final PolicyRef ref;
        long generation;
        String resourceVersion = "";
        long written;
        final Map<String, Need> nodes = new HashMap<>();
        final Set<String> lagging = new HashSet<>();
        long enforcedSince;
        long incompleteSince;
        long latency = -1;
        long lastEnforced; // when a node last came to run this generation

        Tracked(PolicyRef ref) {
            this.ref = ref;
        }

        @Override
        public PolicyRef ref() {
            return ref;
        }

        @Override
        public long generation() {
            return generation;
        }

        @Override
        public String resourceVersion() {
            return resourceVersion;
        }

        @Override
        public long writtenUnixNanos() {
            return written;
        }

        @Override
        public boolean calculated() {
            return !unpublished.contains(this);
        }

        @Override
        public Set<String> nodes() {
            return nodes.keySet();
        }

        @Override
        public boolean lagging(String node) {
            return !calculated() || lagging.contains(node);
        }

        @Override
        public long sinceUnixNanos(String node) {
            Need n = nodes.get(node);
            return n == null ? 0 : n.since;
        }

        @Override
        public long lastEnforcedUnixNanos() {
            return lastEnforced;
        }

        @Override
        public Receipt receipt(int maxNodes) {
            return view(this, maxNodes);
        }
    }

    // ---- the event thread

    /**
     * A policy was written (created or changed) and the calculation has applied it. A write with the
     * same non-zero generation as the one tracked (a resync, a label or status change) changes
     * nothing; any other write is a new generation: nothing is enforced until its snapshots are out.
     */
    public synchronized void written(PolicyRef ref, long generation, String resourceVersion, long seenUnixNanos) {
        Tracked t = policies.get(ref);
        if (t != null && generation != 0 && generation == t.generation) {
            t.resourceVersion = resourceVersion;
            return;
        }
        if (t != null && generation == 0 && !resourceVersion.isEmpty() && resourceVersion.equals(t.resourceVersion)) {
            return;
        }
        if (t == null) {
            t = new Tracked(ref);
            policies.put(ref, t);
            Set<String> kept = deletedNodes.remove(ref);
            if (kept != null) {
                for (String node : kept) {
                    t.nodes.put(node, new Need(Long.MAX_VALUE, seenUnixNanos));
                }
            }
        }
        t.generation = generation;
        t.resourceVersion = resourceVersion;
        t.written = seenUnixNanos;
        t.enforcedSince = 0;
        t.incompleteSince = seenUnixNanos;
        t.latency = -1;
        t.lastEnforced = 0;
        unpublished.add(t);
    }

    /** The policy is gone: its receipt disappears. */
    public synchronized void deleted(PolicyRef ref) {
        Tracked t = policies.remove(ref);
        if (t != null) {
            unpublished.remove(t);
            deletedNodes.put(ref, Set.copyOf(t.nodes.keySet()));
        }
    }

    /** A node's snapshot version was published with these policies (the snapshot's own list). */
    public synchronized void nodePublished(String node, long version, List<ActivePolicy> list, long nowUnixNanos) {
        currentVersions.put(node, version);
        if (lastLists.get(node) == list) {
            return; // the same list instance: the same policies
        }
        lastLists.put(node, list);
        Set<PolicyRef> now = new HashSet<>(list.size() * 4 / 3 + 1);
        for (ActivePolicy p : list) {
            if (!StagedText.isStaged(p.getId())) { // sent, never enforced: no receipt
                now.add(PolicyRef.of(p.getId()));
            }
        }
        Set<PolicyRef> before = nodePolicies.getOrDefault(node, Set.of());
        for (PolicyRef r : before) {
            if (!now.contains(r)) {
                Tracked t = policies.get(r);
                if (t != null) {
                    t.nodes.remove(node);
                    t.lagging.remove(node);
                    settle(t, nowUnixNanos);
                }
            }
        }
        for (PolicyRef r : now) {
            if (!before.contains(r)) {
                Tracked t = policies.get(r);
                if (t == null) {
                    // A policy the receipts were not told about (a calculator fed directly): as if written now.
                    t = new Tracked(r);
                    t.written = nowUnixNanos;
                    t.incompleteSince = nowUnixNanos;
                    policies.put(r, t);
                }
                // A node of a new generation has lagged since the write; one the policy comes to, since now.
                need(t, node, version, unpublished.contains(t) ? t.written : nowUnixNanos, nowUnixNanos);
                settle(t, nowUnixNanos);
            }
        }
        if (now.isEmpty()) {
            nodePolicies.remove(node);
        } else {
            nodePolicies.put(node, now);
        }
    }

    /**
     * Every snapshot computed from the writes applied so far is published: each new generation is
     * required of its nodes at their current versions.
     */
    public synchronized void publicationDone(long nowUnixNanos) {
        for (Tracked t : unpublished) {
            for (String node : List.copyOf(t.nodes.keySet())) {
                need(t, node, currentVersions.getOrDefault(node, 0L), t.written, nowUnixNanos);
            }
        }
        List<Tracked> done = List.copyOf(unpublished);
        unpublished.clear();
        deletedNodes.clear();
        done.forEach(t -> settle(t, nowUnixNanos));
    }

    // ---- the sync service

    /** The node's agent applied everything its stream sent up to this snapshot version. */
    @Override
    public synchronized void applied(String node, long version, long nowUnixNanos) {
        long before = appliedVersions.getOrDefault(node, 0L);
        if (version <= before) {
            return;
        }
        appliedVersions.put(node, version);
        for (PolicyRef r : nodePolicies.getOrDefault(node, Set.of())) {
            Tracked t = policies.get(r);
            if (t == null) {
                continue;
            }
            Need n = t.nodes.get(node);
            if (n != null && version >= n.version && t.lagging.remove(node)) {
                t.lastEnforced = nowUnixNanos;
                settle(t, nowUnixNanos);
            }
        }
    }

    /** A node whose name no stream and no snapshot holds any more (the sync service forgot it). */
    @Override
    public synchronized void forget(String node) {
        if (!nodePolicies.containsKey(node)) {
            appliedVersions.remove(node);
            currentVersions.remove(node);
            lastLists.remove(node);
        }
    }

    // ---- bookkeeping

    private void need(Tracked t, String node, long version, long since, long now) {
        Need old = t.nodes.get(node);
        t.nodes.put(node, new Need(version, old != null && old.version == version ? old.since : since));
        if (appliedVersions.getOrDefault(node, 0L) >= version) {
            if (t.lagging.remove(node) || old == null) {
                t.lastEnforced = now;
            }
        } else {
            t.lagging.add(node);
        }
    }

    /** Enforced everywhere or not, after a change of t's nodes. */
    private void settle(Tracked t, long now) {
        boolean complete = !unpublished.contains(t) && t.lagging.isEmpty();
        if (complete && t.enforcedSince == 0) {
            t.enforcedSince = now;
            if (t.latency < 0) {
                t.latency = Math.max(0, now - t.written);
                if (!t.nodes.isEmpty()) {
                    enforcedEverywhere.accept(t.latency);
                }
            }
        } else if (!complete && t.enforcedSince != 0) {
            t.enforcedSince = 0;
            t.incompleteSince = now;
        }
    }

    // ---- readers

    /** The receipt of one policy with at most {@code maxNodes} node entries (lagging ones first). */
    public synchronized Optional<Receipt> receipt(PolicyRef ref, int maxNodes) {
        Tracked t = policies.get(ref);
        return t == null ? Optional.empty() : Optional.of(view(t, maxNodes));
    }

    /** Every policy's receipt, sorted by kind, namespace and name, each with at most {@code maxNodes} node entries. */
    public synchronized List<Receipt> all(int maxNodes) {
        List<Receipt> out = new ArrayList<>(policies.size());
        for (Tracked t : policies.values()) {
            out.add(view(t, maxNodes));
        }
        out.sort(Comparator.comparing(Receipt::ref));
        return out;
    }

    /** Policies not enforced on every node for longer than {@code thresholdNanos}. */
    public synchronized int notEnforcedFor(long thresholdNanos, long nowUnixNanos) {
        int n = 0;
        for (Tracked t : policies.values()) {
            if (t.enforcedSince == 0 && nowUnixNanos - t.incompleteSince > thresholdNanos) {
                n++;
            }
        }
        return n;
    }

    /** The newest snapshot version the node's agent reported applied here (0: none). */
    public synchronized long appliedVersion(String node) {
        return appliedVersions.getOrDefault(node, 0L);
    }

    /** Reads one policy's state under this lock (views built elsewhere in the package); empty: unknown. */
    synchronized <T> Optional<T> read(PolicyRef ref, Function<TrackedPolicy, T> reader) {
        Tracked t = policies.get(ref);
        return t == null ? Optional.empty() : Optional.ofNullable(reader.apply(t));
    }

    /** Reads every policy's state under this lock, in no order. */
    synchronized <T> List<T> readAll(Function<TrackedPolicy, T> reader) {
        List<T> out = new ArrayList<>(policies.size());
        for (Tracked t : policies.values()) {
            out.add(reader.apply(t));
        }
        return out;
    }

    /** How many policies are tracked (for tests and metrics). */
    public synchronized int size() {
        return policies.size();
    }

    private Receipt view(Tracked t, int maxNodes) {
        boolean calculated = !unpublished.contains(t);
        List<Receipt.NodeReceipt> nodes = new ArrayList<>(Math.min(maxNodes, t.nodes.size()));
        // Lagging ones first, longest lagging first; then enforced ones by name. Only the first
        // maxNodes are ordered: a sweep over every policy must not sort every policy's nodes.
        Set<String> lagging = calculated ? t.lagging : t.nodes.keySet();
        Comparator<String> bySince =
                Comparator.<String>comparingLong(n -> t.nodes.get(n).since).thenComparing(Comparator.naturalOrder());
        for (String node : smallest(lagging, maxNodes, bySince)) {
            nodes.add(nodeReceipt(t, node, false));
        }
        if (nodes.size() < maxNodes && calculated) {
            List<String> enforced = new ArrayList<>();
            for (String node : t.nodes.keySet()) {
                if (!lagging.contains(node)) {
                    enforced.add(node);
                }
            }
            for (String node : smallest(enforced, maxNodes - nodes.size(), Comparator.naturalOrder())) {
                nodes.add(nodeReceipt(t, node, true));
            }
        }
        int laggingCount = lagging.size();
        return new Receipt(
                t.ref,
                t.generation,
                t.resourceVersion,
                t.written,
                calculated,
                t.nodes.size(),
                t.nodes.size() - laggingCount,
                t.enforcedSince,
                t.latency,
                List.copyOf(nodes),
                laggingCount);
    }

    private Receipt.NodeReceipt nodeReceipt(Tracked t, String node, boolean enforced) {
        Need need = t.nodes.get(node);
        return new Receipt.NodeReceipt(
                node,
                enforced,
                need.version == Long.MAX_VALUE ? 0 : need.version,
                appliedVersions.getOrDefault(node, 0L),
                need.since);
    }

    /** The k smallest of names in order, without sorting them all. */
    static List<String> smallest(Collection<String> names, int k, Comparator<String> order) {
        if (k <= 0 || names.isEmpty()) {
            return List.of();
        }
        if (names.size() <= k) {
            List<String> all = new ArrayList<>(names);
            all.sort(order);
            return all;
        }
        PriorityQueue<String> largestFirst = new PriorityQueue<>(k + 1, order.reversed());
        for (String n : names) {
            largestFirst.add(n);
            if (largestFirst.size() > k) {
                largestFirst.poll();
            }
        }
        List<String> out = new ArrayList<>(largestFirst);
        out.sort(order);
        return out;
    }
}
