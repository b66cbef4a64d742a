// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.TierStep;
import io.kubeverdict.proto.v1.Verdict;
import java.util.ArrayList;
import java.util.List;

/**
 * The words for the {@link Decision} codes of one {@link SnapshotIndex}: which policy and rule
 * decided, the reason, a one-line account for verdict logs. A code is read with the index that
 * returned it. Allocates; never used on the hot path. Immutable and thread-safe.
 */
public final class DecisionText {

    private final IndexNames names;

    public DecisionText(SnapshotIndex index) {
        this.names = index.names();
    }

    /** The deciding rule of a code, or -1 for fixed reasons and tier defaults. */
    private int ruleOf(int code) {
        return Decision.ruleOf(code, names.tierCount(), names.ruleCount());
    }

    /** The policy whose rule decided, or null (not isolated, tier default, no endpoint). */
    public PolicyId decidingPolicy(int code) {
        int r = ruleOf(code);
        return r < 0 ? null : names.policyOfRule(r);
    }

    /** The id of the rule that decided ("ingress[0]"), or "" when no rule decided. */
    public String decidingRuleId(int code) {
        int r = ruleOf(code);
        return r < 0 ? "" : names.ruleId(r);
    }

    /** The reason of one direction's code, e.g. "allowed by default/x/allow-a ingress[0]". */
    public String reason(int code) {
        switch (Decision.index(code)) {
            case Decision.NO_ENDPOINT:
                return "no local endpoint";
            case Decision.NOT_ISOLATED:
                return "not isolated";
            case Decision.PASSED_ALL_TIERS:
                return "every tier passed";
            default:
                break;
        }
        String verb = Decision.allowed(code) ? "allowed by " : "denied by ";
        int r = ruleOf(code);
        if (r >= 0) {
            PolicyId p = names.policyOfRule(r);
            return verb + p.getTier() + "/" + p.getName() + " " + names.ruleId(r);
        }
        int tier = Decision.tierNameOf(code, names.tierCount());
        if (tier >= 0) {
            return "no rule matched: " + verb + "the default of tier " + names.tier(tier);
        }
        return "unknown decision code " + code;
    }

    /** A one-line account of a code for verdict logs: "DENY ingress: no rule matched: ...". */
    public String describe(int code) {
        String verdict = Decision.allowed(code) ? "ALLOW" : "DENY";
        if (Decision.index(code) == Decision.NO_ENDPOINT) {
            return verdict + ": " + reason(code);
        }
        return verdict + " " + Decision.directionName(Decision.direction(code)) + ": " + reason(code);
    }

    /**
     * The tiers that passed before the decision, from a trace of the tier walk (see
     * {@link SnapshotIndex#evaluate}, which {@link Explainer} runs with one): every step whose action is PASS.
     */
    List<TierStep> passed(int[] trace) {
        List<TierStep> out = new ArrayList<>();
        for (int i = 1; i <= trace[0]; i++) {
            int step = trace[i];
            if ((step & 3) != SnapshotCompiler.ACTION_PASS) {
                continue;
            }
            int code = (step >>> 2) << 2; // the step's decision index as a code (direction and verdict unused)
            TierStep.Builder b = TierStep.newBuilder().setAction(Action.PASS);
            int r = ruleOf(code);
            if (r >= 0) {
                PolicyId p = names.policyOfRule(r);
                b.setTier(p.getTier()).setPolicy(p).setRuleId(names.ruleId(r));
            } else {
                b.setTier(names.tier(Decision.tierNameOf(code, names.tierCount())));
            }
            out.add(b.build());
        }
        return out;
    }

    /** A passed tier in words: "passed by admin/ops ingress[1]" or "admin: no rule matched, its default passes". */
    static String passedReason(TierStep step) {
        if (step.hasPolicy()) {
            return "passed by " + step.getPolicy().getTier() + "/"
                    + step.getPolicy().getName() + " " + step.getRuleId();
        }
        return step.getTier() + ": no rule matched, its default passes";
    }

    /**
     * One direction's code as the explanation message carries it, with the tiers that passed on
     * the way (from the same walk's trace) in {@code passed} and at the front of the reason.
     */
    DirectionExplanation direction(int code, int[] trace) {
        List<TierStep> passed = passed(trace);
        DirectionExplanation d = direction(code);
        if (passed.isEmpty()) {
            return d;
        }
        StringBuilder reason = new StringBuilder();
        for (TierStep step : passed) {
            reason.append(passedReason(step)).append(" → ");
        }
        reason.append(d.getReason());
        return d.toBuilder().addAllPassed(passed).setReason(reason.toString()).build();
    }

    /** One direction's code as the explanation message carries it. */
    public DirectionExplanation direction(int code) {
        int index = Decision.index(code);
        DirectionExplanation.Builder d = DirectionExplanation.newBuilder()
                .setEvaluated(index != Decision.NO_ENDPOINT)
                // Isolated: some tier lists a policy, even if every tier then passed.
                .setIsolated(index != Decision.NOT_ISOLATED && index != Decision.NO_ENDPOINT)
                .setVerdict(Decision.allowed(code) ? Verdict.VERDICT_ALLOW : Verdict.VERDICT_DENY)
                .setReason(reason(code));
        PolicyId p = decidingPolicy(code);
        if (p != null) {
            d.setPolicy(p).setRuleId(decidingRuleId(code));
        }
        int tier = Decision.tierNameOf(code, names.tierCount());
        String decidingTier = p != null ? p.getTier() : tier >= 0 ? names.tier(tier) : null;
        if (decidingTier != null) {
            d.setDecidingTier(decidingTier);
        }
        return d.build();
    }
}
