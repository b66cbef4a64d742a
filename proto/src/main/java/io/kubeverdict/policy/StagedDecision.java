// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * The would-be decision of a packet under the staged policies, fused with the enforced one
 * ({@link SnapshotIndex#decideWithStaged}): decide()'s order (egress of a local source, then
 * ingress of a local destination) once over the live tiers and once over each slot's would-be
 * tiers, each by its bit-mask program ({@link Programs#stagedBySlot}; beyond 64 rules, rule by
 * rule) as decide does. The addresses are looked up once, a direction whose would-be tiers are
 * its live ones ({@link EndpointTiers#slotStaged} false) is evaluated once for both, and a direction
 * whose two programs number the same rules is matched once, so a packet pays a second tier walk
 * only for a direction a staged policy changes, and a second match only where it adds or reorders rules. Static and allocation-free,
 * reading the index's fields as {@link RuleWalk} does; the attribution to a staged policy is here
 * too, for the same reason.
 */
final class StagedDecision {

    /** The name prefix of a staged policy's id (policy.proto, PolicyId). */
    static final String PREFIX = "staged:";

    /** No direction evaluated on either side. */
    private static final long NEITHER = Decision.pair(Decision.NONE, Decision.NONE);

    private StagedDecision() {}

    /** The enforced and the would-be code ({@link Decision#NOT_STAGED} when no direction of the packet is staged). */
    static long decideBoth(SnapshotIndex index, PacketTuple packet, LearnedAddresses learned) {
        boolean v4 = packet.family == IpAddress.V4;
        if (!v4 && packet.family != IpAddress.V6) {
            return Decision.pair(Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true), Decision.NOT_STAGED);
        }
        long srcHi = v4 ? 0 : packet.srcHi;
        long srcLo = v4 ? packet.srcLo & 0xFFFF_FFFFL : packet.srcLo;
        long dstHi = v4 ? 0 : packet.dstHi;
        long dstLo = v4 ? packet.dstLo & 0xFFFF_FFFFL : packet.dstLo;
        long srcEntry = index.entry(packet.family, srcHi, srcLo);
        long dstEntry = index.entry(packet.family, dstHi, dstLo);
        int src = AddressEntry.endpoint(srcEntry);
        int dst = AddressEntry.endpoint(dstEntry);
        if (src < 0 && dst < 0) {
            return Decision.pair(Decision.of(Decision.NO_ENDPOINT, Decision.EGRESS, true), Decision.NOT_STAGED);
        }
        boolean egressStaged = src >= 0 && index.slotStaged[src * 2 + Decision.EGRESS];
        boolean ingressStaged = dst >= 0 && index.slotStaged[dst * 2 + Decision.INGRESS];
        long egress = NEITHER;
        if (src >= 0) {
            egress = egressStaged
                    ? walkBoth(index, src, Decision.EGRESS, packet, dstHi, dstLo, dstEntry, learned)
                    : same(index.evaluate(src, Decision.EGRESS, packet, dstHi, dstLo, dstEntry, learned, false, null));
        }
        boolean liveNeedsIngress = dst >= 0 && Decision.allowedOrNone(Decision.enforced(egress));
        boolean stagedNeedsIngress = dst >= 0 && Decision.allowedOrNone(Decision.staged(egress));
        long ingress = NEITHER;
        if (!ingressStaged && (liveNeedsIngress || stagedNeedsIngress)) {
            ingress = same(index.evaluate(dst, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned, false, null));
        } else if (liveNeedsIngress && stagedNeedsIngress) {
            ingress = walkBoth(index, dst, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned);
        } else if (liveNeedsIngress) {
            ingress = Decision.pair(
                    index.evaluate(dst, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned, false, null),
                    Decision.NONE);
        } else if (stagedNeedsIngress) {
            ingress = Decision.pair(
                    Decision.NONE, walkStaged(index, dst, Decision.INGRESS, packet, srcHi, srcLo, srcEntry, learned));
        }
        int enforced = Decision.combine(Decision.enforced(egress), Decision.enforced(ingress), dst >= 0);
        return Decision.pair(
                enforced,
                egressStaged || ingressStaged
                        ? Decision.combine(Decision.staged(egress), Decision.staged(ingress), dst >= 0)
                        : Decision.NOT_STAGED);
    }

    /** A direction no staged policy changes: its live result is its would-be one. */
    private static long same(int code) {
        return Decision.pair(code, code);
    }

    /**
     * Both walks of a slot whose would-be tiers differ: when its two programs number the same
     * rules ({@link Programs#stagedSameRules}), the packet is matched against them once and only
     * the tier walks are two.
     */
    private static long walkBoth(
            SnapshotIndex index,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned) {
        int slot = endpoint * 2 + direction;
        if (!index.stagedSameRules[slot]) {
            return Decision.pair(
                    index.evaluate(endpoint, direction, packet, remoteHi, remoteLo, remoteEntry, learned, false, null),
                    walkStaged(index, endpoint, direction, packet, remoteHi, remoteLo, remoteEntry, learned));
        }
        Program live = index.programs[slot];
        long matched =
                ProgramMatch.matchingRules(index, live, endpoint, packet, remoteHi, remoteLo, remoteEntry, learned);
        return Decision.pair(
                TierWalk.walk(
                        index,
                        index.epTierStart[slot],
                        index.epTierEnd[slot],
                        live,
                        matched,
                        endpoint,
                        direction,
                        packet,
                        remoteHi,
                        remoteLo,
                        remoteEntry,
                        learned,
                        null),
                TierWalk.walk(
                        index,
                        index.epStagedStart[slot],
                        index.epStagedEnd[slot],
                        index.stagedPrograms[slot],
                        matched,
                        endpoint,
                        direction,
                        packet,
                        remoteHi,
                        remoteLo,
                        remoteEntry,
                        learned,
                        null));
    }

    private static int walkStaged(
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
                index.stagedPrograms[slot],
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
