// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The would-be decision of a packet under the staged policies ({@link SnapshotIndex#decideStaged}):
 * decide()'s order (egress of a local source, then ingress of a local destination) over each
 * endpoint's staged tier range, which is its live range when it has no staged tiers, each by its
 * bit-mask program ({@link Programs#stagedBySlot}; beyond 64 rules, rule by rule) as decide does.
 * Only packets with an endpoint with staged tiers get past the first check. Static and allocation-free, reading the index's fields
 * as {@link RuleWalk} does; the attribution to a staged policy is here too, for the same reason.
 */
final class StagedDecision {

    /** The name prefix of a staged policy's id (policy.proto, PolicyId). */
    static final String PREFIX = "staged:";

    private StagedDecision() {}

    static int decide(SnapshotIndex index, PacketTuple packet, LearnedAddresses learned) {
        boolean v4 = packet.family == IpAddress.V4;
        if (!v4 && packet.family != IpAddress.V6) {
            return Decision.NOT_STAGED;
        }
        long srcHi = v4 ? 0 : packet.srcHi;
        long srcLo = v4 ? packet.srcLo & 0xFFFF_FFFFL : packet.srcLo;
        long dstHi = v4 ? 0 : packet.dstHi;
        long dstLo = v4 ? packet.dstLo & 0xFFFF_FFFFL : packet.dstLo;
        long srcEntry = index.entry(packet.family, srcHi, srcLo);
        long dstEntry = index.entry(packet.family, dstHi, dstLo);
        int src = AddressEntry.endpoint(srcEntry);
        int dst = AddressEntry.endpoint(dstEntry);
        if ((src < 0 || !index.epStaged[src]) && (dst < 0 || !index.epStaged[dst])) {
            return Decision.NOT_STAGED;
        }
        int egress = -1;
        if (src >= 0) {
            egress = walk(index, src, Decision.EGRESS, packet, dstHi, dstLo, dstEntry, learned);
            if (!Decision.allowed(egress)) {
                return egress;
            }
        }
        if (dst < 0) {
            return egress;
        }
        int ingress = walk(index, dst, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned);
        if (!Decision.allowed(ingress)) {
            return ingress;
        }
        if (egress >= 0 && Decision.index(ingress) == Decision.NOT_ISOLATED && !Decision.isFixedReason(egress)) {
            return egress;
        }
        return ingress;
    }

    private static int walk(
            SnapshotIndex index,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned) {
        int slot = endpoint * 2 + direction;
        return index.walkTiers(
                index.epStagedStart[slot],
                index.epStagedEnd[slot],
                index.epStaged[endpoint] ? index.stagedPrograms[slot] : index.programs[slot],
                endpoint,
                direction,
                packet,
                remoteHi,
                remoteLo,
                remoteEntry,
                learned,
                null);
    }

    /**
     * The staged policy (its number) a would-be code is attributed to: the deciding policy when it
     * is staged, else the first staged policy of the deciding tier, else the first one listed for
     * the endpoint in that direction; -1 when none is listed. Not on the hot path of unchanged
     * verdicts: only for packets whose staged verdict differs.
     */
    static int attributedPolicy(SnapshotIndex index, int code, PacketTuple packet) {
        IndexNames names = index.names();
        int rule = Decision.ruleOf(code, names.tierCount(), names.ruleCount());
        if (rule >= 0 && staged(names, names.policyNumberOfRule(rule))) {
            return names.policyNumberOfRule(rule);
        }
        int direction = Decision.direction(code);
        boolean egress = direction == Decision.EGRESS;
        int endpoint = index.endpointAt(
                packet.family, egress ? packet.srcHi : packet.dstHi, egress ? packet.srcLo : packet.dstLo);
        if (endpoint < 0) {
            return -1;
        }
        int decidingTier = rule >= 0 ? -1 : Decision.tierNameOf(code, names.tierCount());
        int slot = endpoint * 2 + direction;
        int first = -1;
        for (int t = index.epStagedStart[slot]; t < index.epStagedEnd[slot]; t++) {
            for (int k = index.tierPolStart[t]; k < index.tierPolEnd[t]; k++) {
                int policy = index.tierPolicies[k];
                if (policy < 0 || !staged(names, policy)) {
                    continue;
                }
                boolean inDecidingTier = rule >= 0
                        ? names.tier(index.tierName[t])
                                .equals(names.policyOfRule(rule).getTier())
                        : index.tierName[t] == decidingTier;
                if (inDecidingTier) {
                    return policy;
                }
                if (first < 0) {
                    first = policy;
                }
            }
        }
        return first;
    }

    private static boolean staged(IndexNames names, int policy) {
        return policy >= 0 && names.policy(policy).getName().startsWith(PREFIX);
    }
}
