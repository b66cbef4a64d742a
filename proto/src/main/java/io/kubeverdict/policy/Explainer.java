// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Tuple;

/**
 * The full story of a tuple under one {@link SnapshotIndex}, for the explain tools, inspection
 * and verdict logs: both directions are evaluated (even when egress already denies, where
 * {@link SnapshotIndex#decide} stops), each named in words by {@link DecisionText}. Allocates;
 * never used on the hot path. Immutable and thread-safe.
 */
public final class Explainer {

    private final SnapshotIndex index;
    private final DecisionText text;
    private final LearnedAddresses learned;

    /** Explains without learned addresses: domain-name peers match nothing (the offline tools). */
    public Explainer(SnapshotIndex index) {
        this(index, LearnedAddresses.NONE);
    }

    /** Explains with what endpoints learned from DNS, as the agent decides. */
    public Explainer(SnapshotIndex index, LearnedAddresses learned) {
        this.index = index;
        this.text = new DecisionText(index);
        this.learned = learned;
    }

    /** Explains a tuple; the result carries the tuple as given. Throws on unparseable or mixed-family addresses. */
    public Explanation explain(Tuple tuple) {
        return explain(PacketTuple.of(tuple)).toBuilder().setTuple(tuple).build();
    }

    /** As {@link #explain(Tuple)}, from a parsed packet (the agent's verdict logs); canonical addresses. */
    public Explanation explain(PacketTuple original) {
        PacketTuple packet = normalised(original);
        Explanation.Builder b = Explanation.newBuilder().setTuple(packet.toTuple());
        int src = localEndpoint(packet, Decision.EGRESS);
        int dst = localEndpoint(packet, Decision.INGRESS);
        DirectionExplanation egress = notEvaluated();
        DirectionExplanation ingress = notEvaluated();
        if (src >= 0) {
            b.setSource(index.names().endpoint(src));
            egress = direction(packet, Decision.EGRESS, src);
        }
        if (dst >= 0) {
            b.setDestination(index.names().endpoint(dst));
            ingress = direction(packet, Decision.INGRESS, dst);
        }
        return b.setEgress(egress)
                .setIngress(ingress)
                .setVerdict(Explanations.combine(egress, ingress))
                .build();
    }

    /** One direction by the index's tier walk, with the tiers that passed on the way. */
    private DirectionExplanation direction(PacketTuple packet, int direction, int endpoint) {
        int[] trace = index.newTrace();
        int code = decideDirection(packet, direction, learned, trace);
        DirectionExplanation d = text.direction(code, trace);
        String name = direction == Decision.EGRESS ? learnedName(code, endpoint, packet) : null;
        return name == null
                ? d
                : d.toBuilder()
                        .setLearnedDomain(name)
                        .setReason(d.getReason() + " (destination learned from the DNS answer for " + name + ")")
                        .build();
    }

    /** The local endpoint a direction evaluates (the source for egress, the destination for ingress), or -1. */
    private int localEndpoint(PacketTuple packet, int direction) {
        return direction == Decision.EGRESS
                ? AddressEntry.endpoint(index.entry(packet.family, packet.srcHi, packet.srcLo))
                : AddressEntry.endpoint(index.entry(packet.family, packet.dstHi, packet.dstLo));
    }

    /**
     * One direction alone, also where {@link SnapshotIndex#decide} would stop at a denying egress
     * (a {@link Decision#NO_ENDPOINT} code when that side is not local), appending each tier's
     * outcome to the trace (from {@link SnapshotIndex#newTrace}; count in [0], then
     * {@code decisionIndex << 2 | action} per tier). The index's own tier walk: allocates nothing.
     */
    private int decideDirection(PacketTuple packet, int direction, LearnedAddresses learned, int[] trace) {
        boolean egress = direction == Decision.EGRESS;
        boolean v4 = packet.family == IpAddress.V4;
        long localHi = egress ? packet.srcHi : packet.dstHi;
        long localLo = egress ? packet.srcLo : packet.dstLo;
        long remoteHi = v4 ? 0 : egress ? packet.dstHi : packet.srcHi;
        long remoteLo = (egress ? packet.dstLo : packet.srcLo) & (v4 ? 0xFFFF_FFFFL : -1L);
        int endpoint = AddressEntry.endpoint(index.entry(packet.family, localHi, localLo));
        if (endpoint < 0) {
            return Decision.of(Decision.NO_ENDPOINT, direction, true);
        }
        return index.evaluate(
                endpoint,
                direction,
                packet,
                remoteHi,
                remoteLo,
                index.entry(packet.family, remoteHi, remoteLo),
                learned,
                false,
                trace);
    }

    /**
     * When an allowing egress rule with domain-name peers decided: the name under which the source
     * learned the destination, from the first of the rule's sets that holds it; else null.
     */
    private String learnedName(int code, int endpoint, PacketTuple packet) {
        int rule =
                Decision.ruleOf(code, index.names().tierCount(), index.names().ruleCount());
        if (rule < 0 || !Decision.allowed(code)) {
            return null;
        }
        for (int set : index.ruleDomainSets(rule)) {
            if (learned.contains(endpoint, set, packet.family, packet.dstHi, packet.dstLo)) {
                String name = learned.nameOf(endpoint, set, packet.family, packet.dstHi, packet.dstLo);
                if (name != null) {
                    return name;
                }
            }
        }
        return null;
    }

    /** A copy with IPv4 addresses cut to their 32 bits (the parser need not clear the rest). */
    private static PacketTuple normalised(PacketTuple p) {
        PacketTuple out;
        if (p.family == IpAddress.V4) {
            out = new PacketTuple().setV4((int) p.srcLo, (int) p.dstLo, p.protocol, p.dstPort);
            out.srcPort = p.srcPort;
            return out;
        }
        if (p.family == IpAddress.V6) {
            out = new PacketTuple().setV6(p.srcHi, p.srcLo, p.dstHi, p.dstLo, p.protocol, p.dstPort);
            out.srcPort = p.srcPort;
            return out;
        }
        throw new IllegalArgumentException("unknown address family " + p.family);
    }

    private static DirectionExplanation notEvaluated() {
        return DirectionExplanation.newBuilder()
                .setEvaluated(false)
                .setReason("not a local endpoint")
                .build();
    }
}
