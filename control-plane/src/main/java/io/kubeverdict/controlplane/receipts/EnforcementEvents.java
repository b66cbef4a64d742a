// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Which Events to post on NetworkPolicies (they have no status): pure (times are arguments), for
 * {@link EnforcementEventWriter}. Per generation of a policy at most two: {@code PolicyEnforced}
 * (Normal) when it becomes enforced on all its nodes, and {@code PolicyNotEnforced} (Warning)
 * when nodes that report to this replica have lagged for longer than the stall threshold. Node acks
 * never become an Event each: only those two changes of state do. A generation written before the
 * baseline (this replica became the writer, or started) posts no PolicyEnforced (a restart does not
 * replay one per policy), nor does a policy on no node; recovering from a stall always does. At
 * most a budget per sweep, the rest at the next sweeps.
 */
public final class EnforcementEvents {
    public static final String ENFORCED = "PolicyEnforced";
    public static final String NOT_ENFORCED = "PolicyNotEnforced";
    static final int NAMED_LAGGING_NODES = 3;

    /** An Event to post about a NetworkPolicy. */
    public record Due(PolicyRef ref, boolean warning, String reason, String message, long generation) {}

    private static final class Posted {
        final long generation;
        final String resourceVersion;
        boolean enforced;
        boolean stalled;

        Posted(Receipt r) {
            generation = r.generation();
            resourceVersion = r.resourceVersion();
        }

        boolean sameGeneration(Receipt r) {
            return r.generation() != 0
                    ? r.generation() == generation
                    : r.resourceVersion().equals(resourceVersion);
        }
    }

    private final long stallNanos;
    private final Map<PolicyRef, Posted> posted = new HashMap<>();

    public EnforcementEvents(Duration stallThreshold) {
        this.stallNanos = stallThreshold.toNanos();
    }

    /**
     * The Events due now. {@code detail} gives a not-enforced policy's receipt with its longest
     * lagging nodes first; {@code elsewhere} how many of its lagging nodes report to another replica.
     */
    public List<Due> due(
            List<Receipt> receipts,
            Function<PolicyRef, Receipt> detail,
            EnforcedConditions.Elsewhere elsewhere,
            long nowUnixNanos,
            long baselineUnixNanos,
            int budget) {
        List<Due> out = new ArrayList<>();
        Set<PolicyRef> present = new HashSet<>();
        for (Receipt r : receipts) {
            if (!PolicyRef.NETWORK_POLICY.equals(r.ref().kind())) {
                continue;
            }
            present.add(r.ref());
            Posted p = posted.get(r.ref());
            if (p == null || !p.sameGeneration(r)) {
                p = new Posted(r);
                posted.put(r.ref(), p);
            }
            if (out.size() >= budget) {
                continue;
            }
            if (r.enforced()) {
                if (!p.enforced) {
                    boolean news = p.stalled || (r.writtenUnixNanos() >= baselineUnixNanos && r.nodes() > 0);
                    p.enforced = true;
                    p.stalled = false;
                    if (news) {
                        out.add(new Due(r.ref(), false, ENFORCED, enforcedMessage(r), r.generation()));
                    }
                }
                continue;
            }
            p.enforced = false;
            if (p.stalled || nowUnixNanos - r.writtenUnixNanos() <= stallNanos) {
                continue; // no node can have lagged longer than since the write
            }
            Receipt d = detail.apply(r.ref());
            if (d == null || d.nodeReceipts().isEmpty()) {
                continue;
            }
            Receipt.NodeReceipt oldest = d.nodeReceipts().get(0);
            int here = d.laggingNodes() - elsewhere.of(d);
            if (oldest.enforced() || nowUnixNanos - oldest.sinceUnixNanos() <= stallNanos || here <= 0) {
                continue;
            }
            p.stalled = true;
            out.add(new Due(r.ref(), true, NOT_ENFORCED, stalledMessage(d, nowUnixNanos), r.generation()));
        }
        posted.keySet().retainAll(present);
        return out;
    }

    /** Posting failed: the Event is due again at the next sweep. */
    public void failed(Due d) {
        Posted p = posted.get(d.ref());
        if (p != null && p.generation == d.generation()) {
            if (d.warning()) {
                p.stalled = false;
            } else {
                p.enforced = false;
            }
        }
    }

    private static String enforcedMessage(Receipt r) {
        String latency = r.latencyNanos() < 0
                ? ""
                : ", " + Duration.ofNanos(r.latencyNanos()).toMillis() / 1000.0 + " s after the write";
        return "enforced on all " + r.nodes() + " nodes" + latency + generation(r);
    }

    private static String stalledMessage(Receipt d, long now) {
        List<String> names = new ArrayList<>();
        for (Receipt.NodeReceipt n : d.nodeReceipts()) {
            if (!n.enforced() && names.size() < NAMED_LAGGING_NODES) {
                names.add(n.node());
            }
        }
        long seconds = (now - d.nodeReceipts().get(0).sinceUnixNanos()) / 1_000_000_000L;
        return "enforced on " + d.enforcedNodes() + " of " + d.nodes() + " nodes; " + d.laggingNodes()
                + " lagging, the longest for " + seconds + " s: " + String.join(", ", names)
                + (d.laggingNodes() > names.size() ? ", ..." : "") + generation(d);
    }

    private static String generation(Receipt r) {
        return r.generation() != 0 ? " (generation " + r.generation() + ")" : "";
    }
}
