// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import java.util.Map;

/**
 * What makes flows one record: both sides, protocol and port, the verdict and what decided it,
 * and what the staged policies would decide where that differs.
 *
 * @param direction "ingress" or "egress" (the deciding direction), "" when nothing isolated
 * @param policyTier empty with {@code policyName} when a tier default or nothing decided
 * @param staged the would-be verdict of the staged policies; the default instance when they would
 *     not change it (or none is staged)
 */
public record FlowKey(
        Side source,
        Side destination,
        int protocol,
        int port,
        Verdict verdict,
        String direction,
        String policyTier,
        String policyName,
        String rule,
        String decidedBy,
        StagedVerdict staged) {

    /** A key the staged policies do not change. */
    public FlowKey(
            Side source,
            Side destination,
            int protocol,
            int port,
            Verdict verdict,
            String direction,
            String policyTier,
            String policyName,
            String rule,
            String decidedBy) {
        this(
                source,
                destination,
                protocol,
                port,
                verdict,
                direction,
                policyTier,
                policyName,
                rule,
                decidedBy,
                StagedVerdict.getDefaultInstance());
    }

    /** Whether the staged policies would decide these flows otherwise. */
    public boolean stagedFlip() {
        return staged.getVerdict() != Verdict.VERDICT_UNSPECIFIED;
    }

    /**
     * A workload of the cluster (namespace, workload, stable labels) or an address outside it
     * (namespace, workload and labels empty).
     */
    public record Side(String namespace, String workload, Map<String, String> labels, String address) {
        public Side {
            labels = Map.copyOf(labels);
        }

        public static Side outside(String address) {
            return new Side("", "", Map.of(), address);
        }

        public boolean inCluster() {
            return !namespace.isEmpty();
        }

        /** "ns/workload" or the address. */
        public String display() {
            return inCluster() ? namespace + "/" + workload : address;
        }

        long approximateBytes() {
            long b = 64 + text(namespace) + text(workload) + text(address) + 64;
            for (Map.Entry<String, String> e : labels.entrySet()) {
                b += 48 + text(e.getKey()) + text(e.getValue());
            }
            return b;
        }
    }

    /** The policy as `observe` and `policies` name it: "ns/name" for NetworkPolicy, "tier/name" else. */
    public String policyText() {
        return policyText(policyTier, policyName);
    }

    /** The staged policy a flip is attributed to, named as {@link #policyText()} names policies ("" when none). */
    public String stagedPolicyText() {
        return policyText(
                staged.getStagedPolicy().getTier(), staged.getStagedPolicy().getName());
    }

    private static String policyText(String tier, String name) {
        if (name.isEmpty()) {
            return "";
        }
        return tier.isEmpty() || tier.equals("default") ? name : tier + "/" + name;
    }

    /** What the key holds in the heap, roughly (object headers, references, strings, map entries). */
    long approximateBytes() {
        return 64
                + source.approximateBytes()
                + destination.approximateBytes()
                + text(direction)
                + text(policyTier)
                + text(policyName)
                + text(rule)
                + text(decidedBy)
                + (stagedFlip() ? 64L + staged.getSerializedSize() * 3L : 0);
    }

    /** A compact (Latin-1) string: header, array header, one byte a character. */
    static long text(String s) {
        return 40 + s.length();
    }
}
