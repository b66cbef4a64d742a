// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.LocalPolicyReceipt;
import io.kubeverdict.proto.v1.PolicyNodeReceipt;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
        boolean calculated = t.calculated();
        List<Lag> lagging = new ArrayList<>();
        List<String> enforced = new ArrayList<>();
        Map<Integer, List<String>> byPeer = new HashMap<>();
        int unknown = 0;
        for (String node : t.nodes()) {
            int peer = here.contains(node) ? -1 : reportingPeer(answers, node);
            if (peer >= 0) {
                byPeer.computeIfAbsent(peer, p -> new ArrayList<>()).add(node);
            } else if (!calculated || t.lagging(node)) {
                lagging.add(new Lag(node, t.sinceUnixNanos(node)));
                if (peer == -2 && !peers.complete()) {
                    unknown++;
                }
            } else {
                enforced.add(node);
            }
        }
        if (byPeer.isEmpty()) {
            return new Merged(t.receipt(maxNodes), unknown); // every node as this replica's agents said
        }
        long lastEnforced = t.lastEnforcedUnixNanos();
        for (Map.Entry<Integer, List<String>> e : byPeer.entrySet()) {
            PeerAnswers.Answer answer = answers.get(e.getKey());
            LocalPolicyReceipt said = answer.policies().get(t.ref());
            List<String> nodes = e.getValue();
            if (!calculated || said == null || !agrees(t, said, answer.reporting())) {
                nodes.forEach(n -> lagging.add(new Lag(n, t.sinceUnixNanos(n))));
                continue;
            }
            Map<String, Long> saidLagging = new HashMap<>();
            for (PolicyNodeReceipt n : said.getLaggingNodesList()) {
                saidLagging.put(n.getNode(), Timestamps.toNanos(n.getSince()));
            }
            // Lagging nodes the peer counted but did not name (its list was cut): how many is
            // known, not which; as many of the rest count as lagging (never one too few).
            int unnamed = Math.max(0, said.getLagging() - saidLagging.size());
            for (String n : nodes) {
                Long since = saidLagging.get(n);
                if (since != null) {
                    lagging.add(new Lag(n, since));
                } else if (unnamed > 0) {
                    unnamed--;
                    lagging.add(new Lag(n, t.sinceUnixNanos(n)));
                } else {
                    enforced.add(n);
                }
            }
            if (said.hasLastEnforced()) {
                lastEnforced = Math.max(lastEnforced, Timestamps.toNanos(said.getLastEnforced()));
            }
        }
        return new Merged(receipt(t, calculated, lagging, enforced, lastEnforced, maxNodes), unknown);
    }

    /** The first answering peer the node reports to: its index, or -2 for none. */
    private static int reportingPeer(List<PeerAnswers.Answer> answers, String node) {
        for (int i = 0; i < answers.size(); i++) {
            if (answers.get(i).reporting().contains(node)) {
                return i;
            }
        }
        return -2;
    }

    /**
     * The peer's statement is about this generation and about the same nodes reporting to it. The
     * generation is metadata.generation where the object has one (a status write moves the
     * resourceVersion, not the generation: replicas seeing it at different moments still agree),
     * else the resourceVersion; with neither nothing names it and no two replicas can agree.
     */
    private static boolean agrees(TrackedPolicy t, LocalPolicyReceipt said, Set<String> reporting) {
        boolean sameGeneration = t.generation() != 0
                ? said.getGeneration() == t.generation()
                : !t.resourceVersion().isEmpty() && said.getResourceVersion().equals(t.resourceVersion());
        if (!said.getCalculated() || !sameGeneration) {
            return false;
        }
        int count = 0;
        long digest = 0;
        for (String node : t.nodes()) {
            if (reporting.contains(node)) {
                count++;
                digest += LocalStatements.nameHash(node);
            }
        }
        return count == said.getNodes() && digest == said.getNodesDigest();
    }

    private static Receipt receipt(
            TrackedPolicy t,
            boolean calculated,
            List<Lag> lagging,
            List<String> enforced,
            long lastEnforced,
            int maxNodes) {
        lagging.sort(Comparator.comparingLong(Lag::since).thenComparing(Lag::node));
        List<Receipt.NodeReceipt> nodes =
                new ArrayList<>(Math.min(maxNodes, t.nodes().size()));
        for (Lag l : lagging.subList(0, Math.min(maxNodes, lagging.size()))) {
            nodes.add(new Receipt.NodeReceipt(l.node(), false, 0, 0, l.since()));
        }
        for (String n : PolicyReceipts.smallest(enforced, maxNodes - nodes.size(), Comparator.naturalOrder())) {
            nodes.add(new Receipt.NodeReceipt(n, true, 0, 0, t.sinceUnixNanos(n)));
        }
        boolean complete = calculated && lagging.isEmpty();
        long since = 0;
        long latency = -1;
        if (complete) {
            // The last node to come to the generation made it complete, on whichever replica.
            since = Math.max(t.writtenUnixNanos(), lastEnforced);
            latency = since - t.writtenUnixNanos();
        }
        return new Receipt(
                t.ref(),
                t.generation(),
                t.resourceVersion(),
                t.writtenUnixNanos(),
                calculated,
                t.nodes().size(),
                t.nodes().size() - lagging.size(),
                since,
                latency,
                List.copyOf(nodes),
                lagging.size());
    }
}
