// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.PolicyNodeReceipt;
import io.kubeverdict.proto.v1.PolicyReceipt;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

/** Enforcement receipts in words: the tables of {@code status --policies} and {@code status KIND/NS/NAME}, and wait's lines. */
final class ReceiptText {
    private ReceiptText() {}

    static String name(PolicyReceipt r) {
        return r.getNamespace().isEmpty()
                ? r.getKind() + "/" + r.getName()
                : r.getKind() + "/" + r.getNamespace() + "/" + r.getName();
    }

    /** "enforced", "pending" (not calculated yet) or "lagging". */
    static String state(PolicyReceipt r) {
        if (r.getEnforced()) {
            return "enforced";
        }
        return r.getCalculated() ? "lagging" : "pending";
    }

    static String generation(PolicyReceipt r) {
        if (r.getGeneration() > 0) {
            return String.valueOf(r.getGeneration());
        }
        return r.getResourceVersion().isEmpty() ? "-" : "rv " + r.getResourceVersion();
    }

    static String nodes(PolicyReceipt r) {
        return r.getEnforcedNodes() + "/" + r.getNodes();
    }

    /** The lagging nodes the receipt names, "+k" for the ones it does not. */
    static String lagging(PolicyReceipt r) {
        List<String> named = r.getNodeReceiptsList().stream()
                .filter(n -> !n.getEnforced())
                .map(PolicyNodeReceipt::getNode)
                .toList();
        int total = r.getNodes() - r.getEnforcedNodes();
        String text = String.join(",", named);
        return total > named.size() ? text + (text.isEmpty() ? "" : ",") + "+" + (total - named.size()) : text;
    }

    /** Every policy, one row each. */
    static String table(ListPolicyReceiptsResponse receipts, Instant now) {
        TextTable t = new TextTable("POLICY", "GENERATION", "NODES", "STATE", "FOR", "LATENCY", "LAGGING NODES");
        for (PolicyReceipt r : receipts.getReceiptsList()) {
            t.row(
                    name(r),
                    generation(r),
                    nodes(r),
                    state(r),
                    stateAge(r, now),
                    r.hasLatency() ? Durations.compact(duration(r.getLatency())) : "",
                    lagging(r));
        }
        return t.render();
    }

    /** How long the policy has been in its state: since enforced everywhere, or since the write. */
    private static String stateAge(PolicyReceipt r, Instant now) {
        if (r.hasEnforcedSince()) {
            return Durations.compact(since(r.getEnforcedSince(), now));
        }
        return r.hasWritten() ? Durations.compact(since(r.getWritten(), now)) : "";
    }

    /** Named policies: a line each, then its nodes. */
    static String detail(ListPolicyReceiptsResponse receipts, Instant now) {
        StringBuilder out = new StringBuilder();
        for (PolicyReceipt r : receipts.getReceiptsList()) {
            out.append(name(r))
                    .append(": ")
                    .append(state(r))
                    .append(" on ")
                    .append(r.getEnforcedNodes())
                    .append(" of ")
                    .append(r.getNodes())
                    .append(" nodes, generation ")
                    .append(generation(r));
            if (r.hasWritten()) {
                out.append(", written ")
                        .append(Durations.compact(since(r.getWritten(), now)))
                        .append(" ago");
            }
            if (r.hasLatency()) {
                out.append(", enforced everywhere ")
                        .append(Durations.compact(duration(r.getLatency())))
                        .append(" after the write");
            }
            out.append('\n');
            if (r.getNodeReceiptsCount() > 0) {
                TextTable t = new TextTable("NODE", "STATE", "APPLIED/REQUIRED", "FOR");
                for (PolicyNodeReceipt n : r.getNodeReceiptsList()) {
                    t.row(
                            n.getNode(),
                            n.getEnforced() ? "enforced" : "lagging",
                            n.getAppliedVersion() + "/" + n.getRequiredVersion(),
                            n.getEnforced() || !n.hasSince() ? "" : Durations.compact(since(n.getSince(), now)));
                }
                out.append(t.render());
            }
        }
        for (String unknown : receipts.getUnknownList()) {
            out.append(unknown).append(": not known to the control plane (not seen yet, or deleted)\n");
        }
        return out.toString();
    }

    /** wait's line for a policy that is enforced. */
    static String met(PolicyReceipt r) {
        return name(r) + " enforced on " + nodes(r) + " nodes (generation " + generation(r) + ")";
    }

    /** wait's reason for a policy that is not (yet). */
    static String unmet(PolicyReceipt r) {
        if (!r.getCalculated()) {
            return name(r) + ": generation " + generation(r) + " not calculated yet";
        }
        String lagging = r.getNodeReceiptsList().stream()
                .filter(n -> !n.getEnforced())
                .map(PolicyNodeReceipt::getNode)
                .collect(Collectors.joining(", "));
        return name(r) + ": enforced on " + r.getEnforcedNodes() + " of " + r.getNodes() + " nodes (generation "
                + generation(r) + "); lagging: " + lagging;
    }

    private static Duration duration(com.google.protobuf.Duration d) {
        return Duration.ofSeconds(d.getSeconds(), d.getNanos());
    }

    private static Duration since(com.google.protobuf.Timestamp t, Instant now) {
        return Duration.between(Instant.ofEpochMilli(Timestamps.toMillis(t)), now);
    }
}
