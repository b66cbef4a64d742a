// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * Which rules of an endpoint's bit-mask {@link Program} match a packet: the mask of rules whose
 * peers hold the remote address and whose ports take the packet, for {@link SnapshotIndex#evaluate}
 * to read each tier's first match from. Hot path: static, reading the index's own fields as its
 * methods would (no object, no extra indirection), never allocating.
 */
final class ProgramMatch {

    private ProgramMatch() {}

    /** The program's rules whose peers and ports both match (see {@link Program}). */
    static long matchingRules(
            SnapshotIndex index,
            Program p,
            int endpoint,
            PacketTuple packet,
            long remoteHi,
            long remoteLo,
            long remoteEntry,
            LearnedAddresses learned) {
        if (p.rules.length == 0) {
            return 0; // tiers of deny-alls only (a staged deny-all's would-be tiers): nothing to look up
        }
        long peers = peerMask(index, p, packet.family, remoteHi, remoteLo, remoteEntry);
        int[] domains = p.domainSets;
        for (int q = 0; q < domains.length; q++) {
            long m = p.domainMasks[q];
            if ((peers & m) != m && learned.contains(endpoint, domains[q], packet.family, remoteHi, remoteLo)) {
                peers |= m;
            }
        }
        return peers == 0 ? 0 : peers & portMask(index, p, packet, peers);
    }

    /** Rules whose peers hold the remote address: all-peers rules, IP-set peers, ipBlocks. */
    private static long peerMask(
            SnapshotIndex index, Program p, int family, long remoteHi, long remoteLo, long remoteEntry) {
        long peers = p.allPeersMask | p.peerSets.of(index.mem, AddressEntry.membership(remoteEntry));
        return peers | p.blocksHolding(family, remoteHi, remoteLo, remoteEntry);
    }

    /**
     * Rules (among those in peers) whose ports match: no ports, a numbered clause, a named port.
     * Named ports cost one probe of the named-port table, skipped when no named-port member has the
     * packet's protocol and port ({@link NamedPorts}) or when every named-port rule still
     * wanted sits behind one that already matched in its tier (it cannot be the tier's first match,
     * so the result's lowest bit per tier, all that {@link Program#firstRule} reads, is the same).
     */
    private static long portMask(SnapshotIndex index, Program p, PacketTuple packet, long peers) {
        long ports = p.noPortsMask;
        long wanted = peers & ~ports;
        if (wanted == 0) {
            return ports;
        }
        long[] byClass = p.portsByClass;
        if (byClass != null) {
            int portClass = index.portClasses.classOf(packet.protocol, packet.dstPort);
            if (portClass == PortClasses.NO_PORTS) {
                return ports; // only rules without ports match other protocols
            }
            ports |= byClass[portClass];
        } else {
            MaskMap byPort = p.ports(packet.protocol);
            if (byPort == null) {
                return ports;
            }
            ports |= byPort.get(0, packet.dstPort);
        }
        wanted &= ~ports & ~p.shadowedBy(peers & ports);
        if ((wanted & p.namedPortRules) != 0 && index.namedPorts.mayHave(packet.protocol, packet.dstPort)) {
            // Every named-port rule of the destination's (address, protocol, port) sets, including
            // some not wanted: those are either not peers or behind a tier's first match.
            ports |= p.namedPortSets.of(index.mem, index.namedMembership(packet));
        }
        return ports;
    }
}
