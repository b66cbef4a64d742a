// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import com.google.protobuf.Timestamp;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Verdict;

/** Flow records as messages (ListFlows, the history file) and back. */
public final class FlowProtos {
    private FlowProtos() {}

    /** @param withBucket false: a record merged over buckets (no bucket start) */
    public static FlowRecord toProto(FlowHistory.Held h, boolean withBucket) {
        FlowKey k = h.key();
        FlowRecord.Builder b = FlowRecord.newBuilder()
                .setSource(side(k.source(), h.sourcePod(), h.sourceIp()))
                .setDestination(side(k.destination(), h.destinationPod(), h.destinationIp()))
                .setProtocol(k.protocol())
                .setPort(k.port())
                .setVerdict(k.verdict())
                .setDirection(k.direction())
                .setRuleId(k.rule())
                .setDecidedBy(k.decidedBy())
                .setCount(h.count())
                .setFirstSeen(timestamp(h.firstSeen()))
                .setLastSeen(timestamp(h.lastSeen()));
        if (!k.policyName().isEmpty()) {
            b.setPolicy(PolicyId.newBuilder().setTier(k.policyTier()).setName(k.policyName()));
        }
        if (withBucket) {
            b.setBucketStart(timestamp(h.bucketStart()));
        }
        if (k.stagedFlip()) {
            b.setStaged(k.staged());
        }
        return b.build();
    }

    private static FlowSide side(FlowKey.Side s, String pod, String ip) {
        return FlowSide.newBuilder()
                .setNamespace(s.namespace())
                .setWorkload(s.workload())
                .putAllLabels(s.labels())
                .setAddress(s.address())
                .setLastPod(pod == null ? "" : pod)
                .setLastIp(ip == null ? "" : ip)
                .build();
    }

    /** A record read back; refuses one that cannot be a record (a verdict other than allow/deny, no count). */
    public static FlowHistory.Held fromProto(FlowRecord r) {
        if (r.getVerdict() != Verdict.VERDICT_ALLOW && r.getVerdict() != Verdict.VERDICT_DENY) {
            throw new IllegalArgumentException("a flow record without an allow or deny verdict");
        }
        if (!r.hasSource() || !r.hasDestination() || r.getCount() < 1) {
            throw new IllegalArgumentException("a flow record without both sides or a count");
        }
        FlowKey key = new FlowKey(
                side(r.getSource()),
                side(r.getDestination()),
                r.getProtocol(),
                r.getPort(),
                r.getVerdict(),
                r.getDirection(),
                r.getPolicy().getTier(),
                r.getPolicy().getName(),
                r.getRuleId(),
                r.getDecidedBy(),
                r.getStaged());
        return new FlowHistory.Held(
                key,
                millis(r.getBucketStart()),
                r.getCount(),
                millis(r.getFirstSeen()),
                millis(r.getLastSeen()),
                r.getSource().getLastPod(),
                r.getSource().getLastIp(),
                r.getDestination().getLastPod(),
                r.getDestination().getLastIp());
    }

    /** The key of a record (e.g. a ListFlows answer's), for replay. */
    public static FlowKey.Side side(FlowSide s) {
        return new FlowKey.Side(s.getNamespace(), s.getWorkload(), s.getLabelsMap(), s.getAddress());
    }

    public static Timestamp timestamp(long millis) {
        return Timestamp.newBuilder()
                .setSeconds(Math.floorDiv(millis, 1000))
                .setNanos((int) Math.floorMod(millis, 1000) * 1_000_000)
                .build();
    }

    public static long millis(Timestamp t) {
        return t.getSeconds() * 1000 + t.getNanos() / 1_000_000;
    }
}
