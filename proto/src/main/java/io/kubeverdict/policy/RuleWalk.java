// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Protocol;

/**
 * The first matching rule of a tier found rule by rule, in policy order: for an (endpoint,
 * direction) with more than 64 rules (no {@link Program}), and the yardstick the programs are
 * tested against ({@code SnapshotIndex.decideByWalking}). Hot path for those endpoints: static,
 * reading the index's own fields as its methods would (no object, no extra indirection), never
 * allocating.
 */
final class RuleWalk {

    private RuleWalk() {}

    /** The first rule of tier t (in policy order) whose peers and ports match, or -1. */
    static int firstMatchingRule(
            SnapshotIndex index,
            int t,
            int endpoint,
            int direction,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            int remoteMem,
            LearnedAddresses learned) {
        int protocol = packet.protocol;
        boolean hasPorts =
                protocol == Protocol.TCP_VALUE || protocol == Protocol.UDP_VALUE || protocol == Protocol.SCTP_VALUE;
        int namedMem = Membership.UNKNOWN; // looked up on the first named-port clause only
        for (int k = index.tierPolStart[t], kEnd = index.tierPolEnd[t]; k < kEnd; k++) {
            int policy = index.tierPolicies[k];
            if (policy < 0) {
                continue;
            }
            int pslot = policy * 2 + direction;
            for (int r = index.polRuleStart[pslot], rEnd = index.polRuleEnd[pslot]; r < rEnd; r++) {
                if (!peerMatches(index, r, packet.family, remoteHi, remoteLo, remoteMem)
                        && !learnedPeerMatches(index, r, endpoint, packet.family, remoteHi, remoteLo, learned)) {
                    continue;
                }
                int ps = index.rulePortStart[r];
                int pe = index.rulePortEnd[r];
                if (ps == pe) {
                    return r;
                }
                if (!hasPorts) {
                    continue;
                }
                for (int q = ps; q < pe; q++) {
                    int named = index.portNamedSet[q];
                    if (named == SnapshotCompiler.NOT_NAMED) {
                        if (index.portProto[q] == protocol
                                && packet.dstPort >= index.portLo[q]
                                && packet.dstPort <= index.portHi[q]) {
                            return r;
                        }
                    } else if (named >= 0) {
                        if (namedMem == Membership.UNKNOWN) {
                            namedMem = index.namedMembership(packet);
                        }
                        if (Membership.contains(index.mem, namedMem, named)) {
                            return r;
                        }
                    }
                }
            }
        }
        return -1;
    }

    private static boolean peerMatches(SnapshotIndex index, int r, int family, long hi, long lo, int remoteMem) {
        if (index.ruleAllPeers[r]) {
            return true;
        }
        int ss = index.ruleSetStart[r];
        int se = index.ruleSetEnd[r];
        if (ss != se && remoteMem != Membership.EMPTY) {
            for (int i = ss; i < se; i++) {
                if (Membership.contains(index.mem, remoteMem, index.ruleSets[i])) {
                    return true;
                }
            }
        }
        RangeSet ranges = family == IpAddress.V4 ? index.ruleV4[r] : index.ruleV6[r];
        return ranges != null && ranges.contains(hi, lo);
    }

    /** Whether one of the rule's domain-name peers holds the remote in the endpoint's learned set. */
    private static boolean learnedPeerMatches(
            SnapshotIndex index, int r, int endpoint, int family, long hi, long lo, LearnedAddresses learned) {
        for (int i = index.ruleDomainStart[r], end = index.ruleDomainEnd[r]; i < end; i++) {
            if (learned.contains(endpoint, index.ruleDomains[i], family, hi, lo)) {
                return true;
            }
        }
        return false;
    }
}
