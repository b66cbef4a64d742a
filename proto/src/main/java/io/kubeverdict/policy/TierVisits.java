// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.TierVisit;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.List;

/**
 * The tiers a direction's evaluation went through, for explain: the endpoint's tiers that list
 * policies for that direction, in order, up to the one that decided (all of them when every tier
 * passed). Derived from the endpoint's tier lists and the deciding tier, so it names exactly the
 * tiers the verdict function visited.
 */
public final class TierVisits {
    private TierVisits() {}

    /** {@code d} with {@code tiers} filled in; unchanged when the direction was not evaluated. */
    public static DirectionExplanation annotate(DirectionExplanation d, WorkloadEndpoint endpoint, int direction) {
        if (!d.getEvaluated() || endpoint == null) {
            return d;
        }
        DirectionExplanation.Builder b = d.toBuilder().clearTiers();
        for (TierInfo tier : endpoint.getTiersList()) {
            List<String> policies =
                    direction == Decision.INGRESS ? tier.getIngressPoliciesList() : tier.getEgressPoliciesList();
            if (policies.isEmpty()) {
                continue; // a tier without policies for this direction is skipped
            }
            boolean decided = tier.getName().equals(d.getDecidingTier());
            b.addTiers(TierVisit.newBuilder()
                    .setTier(tier.getName())
                    .addAllPolicies(policies)
                    .setDecided(decided));
            if (decided) {
                break;
            }
        }
        return b.build();
    }

    /** Both directions of an explanation, each with its own side's endpoint (null: not local). */
    public static Explanation annotate(Explanation e, WorkloadEndpoint source, WorkloadEndpoint destination) {
        return e.toBuilder()
                .setEgress(annotate(e.getEgress(), source, Decision.EGRESS))
                .setIngress(annotate(e.getIngress(), destination, Decision.INGRESS))
                .build();
    }
}
