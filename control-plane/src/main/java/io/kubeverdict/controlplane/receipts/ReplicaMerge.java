// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.LocalPolicyReceipt;
import io.kubeverdict.proto.v1.PolicyNodeReceipt;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One policy's receipt for the whole cluster: this replica's calculation says which nodes the
 * policy applies to; for each of them, the replica its agent reports to says whether it runs the
 * policy's newest generation. Pure.
 *
 * <p>A peer's statement counts only when it is about the same generation (resourceVersion) and
 * about the same nodes (count and digest of the policy's nodes reporting to it, as each replica
 * calculated them); otherwise those nodes count as lagging until the two agree. A node reporting
 * to no replica keeps what this replica last heard from its agent (an agent keeps enforcing what it
 * applied while it is away); when a peer did not answer, such a node's lag is unknown.
 */
final class ReplicaMerge {
    /** The receipt, and how many of its lagging nodes may report to a replica that did not answer. */
    record Merged(Receipt receipt, int unknownNodes) {}

    private record Lag(String node, long since) {}

    private ReplicaMerge() {}

    static Merged merge(TrackedPolicy t, Set<String> here, PeerAnswers peers, int maxNodes) {
        List<PeerAnswers.Answer> answers = peers.answers();
        if (answers.isEmpty() && peers.complete()) {
            return new Merged(t.receipt(maxNodes), 0);
        }
        int n = answers.size();
        boolean names = maxNodes > 0; // node entries wanted: else only counts (the writers' sweeps)
        int[] count = new int[n]; // of the policy's nodes reporting to each peer (its statement's terms)
        long[] digest = new long[n];
        int[] group = new int[n]; // of those not reporting here: the ones each peer answers for
        List<List<String>> groupNodes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            groupNodes.add(new ArrayList<>());
        }
        Tally tally = new Tally(names);
        int unknown = 0;
        int fromPeers = 0;
        for (String node : t.nodes()) {
            int first = -1;
            for (int i = 0; i < n; i++) {
                Long hash = answers.get(i).reporting().get(node);
                if (hash != null) {
                    count[i]++;
                    digest[i] += hash;
                    first = first < 0 ? i : first;
                }
            }
            boolean isHere = here.contains(node);
            if (!isHere && first >= 0) {
                group[first]++;
                fromPeers++;
                if (names) {
                    groupNodes.get(first).add(node);
                }
            } else if (t.lagging(node)) {
                tally.lag(node, t.sinceUnixNanos(node));
                if (!isHere && !peers.complete()) {
                    unknown++;
                }
            } else {
                tally.enforced(node);
            }
        }
        if (fromPeers == 0) {
            return new Merged(t.receipt(maxNodes), unknown); // every node as this replica's agents said
        }
        long lastEnforced = t.lastEnforcedUnixNanos();
        for (int i = 0; i < n; i++) {
            if (group[i] == 0) {
                continue;
            }
            LocalPolicyReceipt said = answers.get(i).policies().get(t.ref());
            if (!t.calculated() || said == null || !agrees(t, said, count[i], digest[i])) {
                tally.lagAll(group[i], groupNodes.get(i), t);
                continue;
            }
            // The peer's named laggards among the nodes it answers for here; lagging nodes it
            // counted but did not name (its list was cut): how many is known, not which, so as
            // many of the others count as lagging (never one too few).
            Set<String> named = new HashSet<>();
            for (PolicyNodeReceipt l : said.getLaggingNodesList()) {
                if (answersFor(i, l.getNode(), t, here, answers)) {
                    named.add(l.getNode());
                    tally.lag(l.getNode(), Timestamps.toNanos(l.getSince()));
                }
            }
            int unnamed =
                    Math.min(Math.max(0, said.getLagging() - said.getLaggingNodesCount()), group[i] - named.size());
            tally.lagUnnamed(unnamed, group[i] - named.size() - unnamed, groupNodes.get(i), named, t);
            if (said.hasLastEnforced()) {
                lastEnforced = Math.max(lastEnforced, Timestamps.toNanos(said.getLastEnforced()));
            }
        }
        return new Merged(tally.receipt(t, lastEnforced, maxNodes), unknown);
    }

    /** Whether peer i is the one answering here for this node (one of the policy's, not reporting here, i first). */
    private static boolean answersFor(
            int i, String node, TrackedPolicy t, Set<String> here, List<PeerAnswers.Answer> answers) {
        if (here.contains(node) || !t.nodes().contains(node)) {
            return false;
        }
        for (int j = 0; j < i; j++) {
            if (answers.get(j).reporting().containsKey(node)) {
                return false;
            }
        }
        return true;
    }

    /** Lagging and enforced nodes: always counted, named only when node entries are wanted. */
    private static final class Tally {
        final boolean names;
        final List<Lag> lagging = new ArrayList<>();
        final List<String> enforced = new ArrayList<>();
        int laggingCount;

        Tally(boolean names) {
            this.names = names;
        }

        void lag(String node, long since) {
            laggingCount++;
            if (names) {
                lagging.add(new Lag(node, since));
            }
        }

        void enforced(String node) {
            if (names) {
                enforced.add(node);
            }
        }

        void lagAll(int count, List<String> nodes, TrackedPolicy t) {
            laggingCount += count;
            if (names) {
                nodes.forEach(x -> lagging.add(new Lag(x, t.sinceUnixNanos(x))));
            }
        }

        /** Of the nodes not named lagging: {@code unnamed} lag (the first ones), {@code rest} are enforced. */
        void lagUnnamed(int unnamed, int rest, List<String> nodes, Set<String> named, TrackedPolicy t) {
            laggingCount += unnamed;
            if (!names) {
                return;
            }
            int left = unnamed;
            for (String x : nodes) {
                if (named.contains(x)) {
                    continue;
                }
                if (left > 0) {
                    left--;
                    lagging.add(new Lag(x, t.sinceUnixNanos(x)));
                } else {
                    enforced.add(x);
                }
            }
        }

        Receipt receipt(TrackedPolicy t, long lastEnforced, int maxNodes) {
            boolean calculated = t.calculated();
            List<Receipt.NodeReceipt> nodes = new ArrayList<>();
            if (names) {
                lagging.sort(Comparator.comparingLong(Lag::since).thenComparing(Lag::node));
                for (Lag l : lagging.subList(0, Math.min(maxNodes, lagging.size()))) {
                    nodes.add(new Receipt.NodeReceipt(l.node(), false, 0, 0, l.since()));
                }
                for (String x : PolicyReceipts.smallest(enforced, maxNodes - nodes.size(), Comparator.naturalOrder())) {
                    nodes.add(new Receipt.NodeReceipt(x, true, 0, 0, t.sinceUnixNanos(x)));
                }
            }
            boolean complete = calculated && laggingCount == 0;
            long since = 0;
            long latency = -1;
            if (complete) {
                // The last node to come to the generation made it complete, on whichever replica.
                since = Math.max(t.writtenUnixNanos(), lastEnforced);
                latency = since - t.writtenUnixNanos();
            }
            int total = t.nodes().size();
            return new Receipt(
                    t.ref(),
                    t.generation(),
                    t.resourceVersion(),
                    t.writtenUnixNanos(),
                    calculated,
                    total,
                    total - laggingCount,
                    since,
                    latency,
                    List.copyOf(nodes),
                    laggingCount);
        }
    }

    /**
     * The peer's statement is about this generation and about the same nodes reporting to it. The
     * generation is metadata.generation where the object has one (a status write moves the
     * resourceVersion, not the generation: replicas seeing it at different moments still agree),
     * else the resourceVersion; with neither nothing names it and no two replicas can agree.
     */
    private static boolean agrees(TrackedPolicy t, LocalPolicyReceipt said, int count, long digest) {
        boolean sameGeneration = t.generation() != 0
                ? said.getGeneration() == t.generation()
                : !t.resourceVersion().isEmpty() && said.getResourceVersion().equals(t.resourceVersion());
        if (!said.getCalculated() || !sameGeneration) {
            return false;
        }
        return count == said.getNodes() && digest == said.getNodesDigest();
    }
}
