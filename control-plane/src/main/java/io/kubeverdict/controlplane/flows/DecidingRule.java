// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Verdict;

/** Which direction of an explained verdict decided it, and the words for it (observe, flows, whatif). */
public final class DecidingRule {
    private DecidingRule() {}

    /**
     * "egress" or "ingress": for a denial the direction that denied (egress first), for an
     * allowed connection the isolated direction that allowed it (ingress first); "" when no side
     * was isolated.
     */
    public static String direction(Explanation x) {
        DirectionExplanation egress = x.getEgress();
        DirectionExplanation ingress = x.getIngress();
        if (x.getVerdict() != Verdict.VERDICT_ALLOW) {
            return egress.getEvaluated() && egress.getVerdict() != Verdict.VERDICT_ALLOW ? "egress" : "ingress";
        }
        if (ingress.getEvaluated() && ingress.getIsolated()) {
            return "ingress";
        }
        if (egress.getEvaluated() && egress.getIsolated()) {
            return "egress";
        }
        return "";
    }

    /** The explanation of the deciding direction (empty when nothing isolated). */
    public static DirectionExplanation of(Explanation x) {
        return switch (direction(x)) {
            case "egress" -> x.getEgress();
            case "ingress" -> x.getIngress();
            default -> DirectionExplanation.getDefaultInstance();
        };
    }

    /** "ingress default/x/allow-a ingress[0]", "egress default of tier admin (no rule matched)", "not isolated". */
    public static String text(Explanation x) {
        String direction = direction(x);
        if (direction.isEmpty()) {
            return "not isolated";
        }
        DirectionExplanation d = of(x);
        if (d.hasPolicy() && !d.getPolicy().getName().isEmpty()) {
            return direction + " " + policyName(d.getPolicy()) + " " + d.getRuleId();
        }
        if (!d.getDecidingTier().isEmpty()) {
            return direction + " default of tier " + d.getDecidingTier() + " (no rule matched)";
        }
        return direction + " " + d.getReason();
    }

    /** "ns/name" for a NetworkPolicy, "tier/name" for the admin tiers. */
    public static String policyName(PolicyId id) {
        return id.getTier().isEmpty() || id.getTier().equals("default")
                ? id.getName()
                : id.getTier() + "/" + id.getName();
    }
}
