// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.kubeverdict.proto.v1.LocalReceipts;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The receipts every reader uses (ListPolicyReceipts, `wait`, conditions, Events): this replica's
 * calculation, with each node's state from the replica its agent reports to. Each agent streams
 * from one replica, so without its peers' answers a replica knows only its own agents.
 */
public final class ReplicatedReceipts {
    /** Lagging nodes asked of peers per policy when every policy is read (the counts stay exact). */
    static final int LAGGING_NAMED_IN_SWEEPS = 3;

    private final PolicyReceipts local;
    private final Supplier<Set<String>> here;
    private volatile PeerReceipts peers = PeerReceipts.ALONE;
    private volatile String replica = "";

    /** @param here the nodes whose agents have a stream to this replica now */
    public ReplicatedReceipts(PolicyReceipts local, Supplier<Set<String>> here) {
        this.local = local;
        this.here = here;
    }

    /** From now on asks these peers; {@code replica} is this replica's name in its answers to them. */
    public void askPeers(String replica, PeerReceipts peers) {
        this.replica = replica;
        this.peers = peers;
    }

    /** Whether some peer is asked (not {@link PeerReceipts#ALONE} or {@link PeerReceipts#NOT_ASKED}). */
    public boolean asksPeers() {
        return peers != PeerReceipts.ALONE && peers != PeerReceipts.NOT_ASKED;
    }

    /** This replica's own bookkeeping (the applied versions of its agents). */
    public PolicyReceipts local() {
        return local;
    }

    /**
     * One look at receipts.
     *
     * @param unknownNodes per receipt, how many of its lagging nodes may report to a replica that was
     *     not heard from (absent: none)
     * @param missing named policies this replica does not know
     */
    public record Look(List<Receipt> receipts, Map<PolicyRef, Integer> unknownNodes, List<PolicyRef> missing) {
        public int unknown(Receipt r) {
            return unknownNodes.getOrDefault(r.ref(), 0);
        }
    }

    /** Every policy, sorted, each with at most {@code maxNodes} node entries. */
    public Look all(int maxNodes) {
        return all(maxNodes, peers);
    }

    /** As {@link #all(int)}, nodes reporting elsewhere unknown when no peer is asked (several replicas). */
    public Look all(int maxNodes, PeerReceipts whenNotAsked) {
        PeerReceipts p = asksPeers() ? peers : whenNotAsked;
        PeerAnswers answers = p.ask(List.of(), Math.max(maxNodes, LAGGING_NAMED_IN_SWEEPS));
        Set<String> h = here.get();
        List<ReplicaMerge.Merged> merged = local.readAll(t -> ReplicaMerge.merge(t, h, answers, maxNodes));
        return look(merged, List.of());
    }

    /** The named policies (each at most once), with at most {@code maxNodes} node entries each. */
    public Look named(Collection<PolicyRef> refs, int maxNodes) {
        PeerAnswers answers = peers.ask(refs, maxNodes);
        Set<String> h = here.get();
        List<ReplicaMerge.Merged> merged = new ArrayList<>();
        List<PolicyRef> missing = new ArrayList<>();
        for (PolicyRef ref : refs) {
            local.read(ref, t -> ReplicaMerge.merge(t, h, answers, maxNodes))
                    .ifPresentOrElse(merged::add, () -> missing.add(ref));
        }
        return look(merged, missing);
    }

    /** What this replica tells its peers (ListLocalReceipts). */
    public LocalReceipts localStatements(Collection<PolicyRef> named, int maxLagging) {
        return LocalStatements.of(local, replica, here.get(), named, maxLagging);
    }

    private static Look look(List<ReplicaMerge.Merged> merged, List<PolicyRef> missing) {
        List<Receipt> receipts = new ArrayList<>(merged.size());
        Map<PolicyRef, Integer> unknown = new HashMap<>();
        for (ReplicaMerge.Merged m : merged) {
            receipts.add(m.receipt());
            if (m.unknownNodes() > 0) {
                unknown.put(m.receipt().ref(), m.unknownNodes());
            }
        }
        receipts.sort(Comparator.comparing(Receipt::ref));
        return new Look(List.copyOf(receipts), Map.copyOf(unknown), List.copyOf(missing));
    }
}
