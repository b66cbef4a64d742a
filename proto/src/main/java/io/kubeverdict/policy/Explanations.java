// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Verdict;

/** Pure helpers over Explanation messages. */
public final class Explanations {

    private Explanations() {}

    /** Allowed iff every evaluated direction allows (nothing evaluated: allowed). */
    public static Verdict combine(DirectionExplanation egress, DirectionExplanation ingress) {
        boolean denied = (egress.getEvaluated() && egress.getVerdict() != Verdict.VERDICT_ALLOW)
                || (ingress.getEvaluated() && ingress.getVerdict() != Verdict.VERDICT_ALLOW);
        return denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW;
    }

    /**
     * Joins the egress half explained on the source's node with the ingress half explained on the
     * destination's node (each side is only local to its own node's snapshot). The tuple is the
     * source side's.
     */
    public static Explanation combine(Explanation sourceSide, Explanation destinationSide) {
        Explanation.Builder b = Explanation.newBuilder()
                .setTuple(sourceSide.getTuple())
                .setEgress(sourceSide.getEgress())
                .setIngress(destinationSide.getIngress());
        if (sourceSide.hasSource()) {
            b.setSource(sourceSide.getSource());
        }
        if (destinationSide.hasDestination()) {
            b.setDestination(destinationSide.getDestination());
        }
        return b.setVerdict(combine(b.getEgress(), b.getIngress())).build();
    }
}
