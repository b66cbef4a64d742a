// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rules one endpoint evaluates in one direction, as bit masks: bit i is the i-th rule in
 * evaluation order (tiers, then policies, then rules). A packet computes the mask of rules whose
 * peers match and the mask of rules whose ports match; the lowest bit of their intersection
 * within a tier is that tier's first matching rule ({@link #firstRule}). This replaces a walk
 * over every rule with a few probes and AND/OR, and is used when at most 64 rules are in play
 * (else the index walks). What a tier's outcome means (actions, defaults, PASS) is the index's
 * tier walk, not the program's. Endpoints with identical tier lists share one program
 * ({@link Programs}).
 */
final class Program {

    static final int MAX_RULES = 64;

    /** Global rule index of each bit. */
    final int[] rules;
    /** Per tier of the endpoint's list (in order): the bits of its rules. */
    final long[] tierMasks;

    final long allPeersMask;
    // Global IP-set number -> mask of rules that name it as a peer.
    final SetMasks peerSets;
    // ipBlock peers: address -> mask of rules whose blocks hold it.
    final MaskMap v4Blocks;
    final MaskMap v6Blocks;
    // The same by the segment an address entry records (BlockSegments); null: search the map.
    final long[] v4BlocksBySegment;
    final long[] v6BlocksBySegment;

    final long noPortsMask;
    // Numbered port clauses: port -> mask of rules, one map per protocol.
    final MaskMap tcpPorts;
    final MaskMap udpPorts;
    final MaskMap sctpPorts;
    // The same by the packet's port class (PortClasses, all three protocols); null: search the maps.
    final long[] portsByClass;
    // Named-port clauses: IP_AND_PORT set number -> mask of rules naming it; all those rules.
    final SetMasks namedPortSets;
    final long namedPortRules;
    // Domain-name peers: domain set index and the mask of rules naming it (asked of LearnedAddresses).
    final int[] domainSets;
    final long[] domainMasks;

    private Program(Builder b, BlockSegments v4Segments, BlockSegments v6Segments, PortClasses portClasses) {
        rules = b.rules.toArray();
        tierMasks = b.tierMasks.stream().mapToLong(Long::longValue).toArray();
        allPeersMask = b.allPeersMask;
        peerSets = new SetMasks(b.setMasks);
        v4Blocks = blocks(b.v4Blocks);
        v6Blocks = blocks(b.v6Blocks);
        v4BlocksBySegment = v4Segments.masksOf(v4Blocks);
        v6BlocksBySegment = v6Segments.masksOf(v6Blocks);
        noPortsMask = b.noPortsMask;
        MaskMap.Builder tcp = new MaskMap.Builder();
        MaskMap.Builder udp = new MaskMap.Builder();
        MaskMap.Builder sctp = new MaskMap.Builder();
        Map<Integer, Long> named = new LinkedHashMap<>();
        for (Map.Entry<List<Integer>, Long> e : b.clauses.entrySet()) {
            int protocol = e.getKey().get(0);
            int namedSet = e.getKey().get(3);
            if (namedSet >= 0) {
                named.merge(namedSet, e.getValue(), (x, y) -> x | y);
                continue;
            }
            MaskMap.Builder target = switch (protocol) {
                case Protocol.TCP_VALUE -> tcp;
                case Protocol.UDP_VALUE -> udp;
                case Protocol.SCTP_VALUE -> sctp;
                default -> null;
            };
            if (target != null) {
                target.add(0, e.getKey().get(1), 0, e.getKey().get(2), e.getValue());
            }
        }
        tcpPorts = tcp.build();
        udpPorts = udp.build();
        sctpPorts = sctp.build();
        portsByClass = portClasses.masksOf(tcpPorts, udpPorts, sctpPorts);
        namedPortSets = new SetMasks(named);
        namedPortRules = named.values().stream().mapToLong(Long::longValue).reduce(0, (x, y) -> x | y);
        domainSets = b.domainMasks.keySet().stream().mapToInt(Integer::intValue).toArray();
        domainMasks = b.domainMasks.values().stream().mapToLong(Long::longValue).toArray();
    }

    private static MaskMap blocks(Map<RangeSet, Long> blocks) {
        MaskMap.Builder builder = new MaskMap.Builder();
        blocks.forEach((ranges, mask) -> ranges.addTo(builder, mask));
        return builder.build();
    }

    /**
     * The rules whose ipBlocks hold the address: one array read when its entry records a segment
     * this program has masks for, else a search of the ranges.
     */
    long blocksHolding(int family, long hi, long lo, long entry) {
        long[] bySegment = family == IpAddress.V4 ? v4BlocksBySegment : v6BlocksBySegment;
        int segment = AddressEntry.segment(entry);
        if (bySegment != null && segment < bySegment.length) {
            return bySegment[segment];
        }
        return (family == IpAddress.V4 ? v4Blocks : v6Blocks).get(hi, lo);
    }

    /**
     * The first of the matched rules in the tier at this position of the endpoint's tier list, as
     * a global rule index; -1 when none of its rules matched.
     */
    int firstRule(int tier, long matched) {
        long m = matched & tierMasks[tier];
        return m == 0 ? -1 : rules[Long.numberOfTrailingZeros(m)];
    }

    /**
     * The rules that come after the first matched rule of their tier (that rule included): none of
     * them can be the tier's first match, whatever else matches. Tiers are contiguous runs of bits.
     */
    long shadowedBy(long matched) {
        long shadowed = 0;
        for (long tier : tierMasks) {
            long m = matched & tier;
            shadowed |= tier & -(m & -m); // m & -m: the lowest matched bit; -(that): it and every bit above
        }
        return shadowed;
    }

    /** The numbered-port clauses of a protocol, or null for protocols without ports. */
    MaskMap ports(int protocol) {
        return switch (protocol) {
            case Protocol.TCP_VALUE -> tcpPorts;
            case Protocol.UDP_VALUE -> udpPorts;
            case Protocol.SCTP_VALUE -> sctpPorts;
            default -> null;
        };
    }

    /** Collects a program rule by rule; refuses (returns false) beyond {@link #MAX_RULES}. */
    static final class Builder {
        final IntList rules = new IntList();
        final List<Long> tierMasks = new ArrayList<>();
        long allPeersMask;
        final Map<Integer, Long> setMasks = new LinkedHashMap<>();
        final Map<RangeSet, Long> v4Blocks = new IdentityHashMap<>();
        final Map<RangeSet, Long> v6Blocks = new IdentityHashMap<>();
        long noPortsMask;
        final Map<List<Integer>, Long> clauses = new LinkedHashMap<>();
        final Map<Integer, Long> domainMasks = new LinkedHashMap<>();

        /** Starts the next tier of the endpoint's list. */
        void tier() {
            tierMasks.add(0L);
        }

        /** Adds one rule to the current tier; false when the program would exceed 64 rules. */
        boolean rule(
                int globalRule,
                boolean allPeers,
                int[] sets,
                int[] domainSets,
                RangeSet v4,
                RangeSet v6,
                int[][] portClauses) {
            int bit = rules.size();
            if (bit == MAX_RULES) {
                return false;
            }
            long m = 1L << bit;
            rules.add(globalRule);
            int t = tierMasks.size() - 1;
            tierMasks.set(t, tierMasks.get(t) | m);
            if (allPeers) {
                allPeersMask |= m;
            }
            for (int s : sets) {
                setMasks.merge(s, m, (a, c) -> a | c);
            }
            for (int d : domainSets) {
                domainMasks.merge(d, m, (a, c) -> a | c);
            }
            if (v4 != null) {
                v4Blocks.merge(v4, m, (a, c) -> a | c);
            }
            if (v6 != null) {
                v6Blocks.merge(v6, m, (a, c) -> a | c);
            }
            if (portClauses.length == 0) {
                noPortsMask |= m;
            }
            for (int[] c : portClauses) {
                if (c[3] == SnapshotCompiler.NEVER) {
                    continue; // matches nothing, but the rule still has ports
                }
                clauses.merge(List.of(c[0], c[1], c[2], c[3]), m, (a, x) -> a | x);
            }
            return true;
        }

        /** The program; masks by segment for the segments of the index's lineage, by class for the rules' port classes. */
        Program build(BlockSegments v4Segments, BlockSegments v6Segments, PortClasses portClasses) {
            return new Program(this, v4Segments, v6Segments, portClasses);
        }
    }
}
