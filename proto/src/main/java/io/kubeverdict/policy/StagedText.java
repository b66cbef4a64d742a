// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Verdict;

/**
 * Words for a would-be code of {@link SnapshotIndex#decideStaged}: the staged policy a differing
 * verdict is attributed to, and the {@link StagedVerdict} a verdict event carries. Reads the index
 * that returned the code; never on the hot path of a verdict the staged policies do not change.
 */
public final class StagedText {

    private final SnapshotIndex index;
    private final DecisionText text;

    public StagedText(SnapshotIndex index) {
        this.index = index;
        this.text = new DecisionText(index);
    }

    /** Whether a policy id is a staged policy's ("staged:" name prefix, policy.proto). */
    public static boolean isStaged(PolicyId id) {
        return id.getName().startsWith(StagedDecision.PREFIX);
    }

    /** A staged policy's own id: the "staged:" prefix taken off its name (other ids as they are). */
    public static PolicyId ownId(PolicyId id) {
        return isStaged(id)
                ? id.toBuilder()
                        .setName(id.getName().substring(StagedDecision.PREFIX.length()))
                        .build()
                : id;
    }

    /**
     * The number of the staged policy a would-be code is attributed to (see {@link StagedVerdict}),
     * or -1; {@link #policy} names it. Allocation-free.
     */
    public int attributedPolicy(int stagedCode, PacketTuple packet) {
        return StagedDecision.attributedPolicy(index, stagedCode, packet);
    }

    /** The id, as sent ("staged:" prefix included), of a policy number of this index. */
    public PolicyId policy(int policy) {
        return index.names().policy(policy);
    }

    /** The id of the rule a would-be code names ("" for a tier default). */
    public String ruleId(int stagedCode) {
        return text.decidingRuleId(stagedCode);
    }

    /** The would-be verdict of a packet whose staged code differs from its enforced verdict. */
    public StagedVerdict verdict(int stagedCode, PacketTuple packet) {
        StagedVerdict.Builder b = StagedVerdict.newBuilder()
                .setVerdict(Decision.allowed(stagedCode) ? Verdict.VERDICT_ALLOW : Verdict.VERDICT_DENY)
                .setDirection(Decision.directionName(Decision.direction(stagedCode)))
                .setReason(text.reason(stagedCode));
        int staged = attributedPolicy(stagedCode, packet);
        PolicyId deciding = text.decidingPolicy(stagedCode);
        if (staged >= 0) {
            b.setStagedPolicy(ownId(policy(staged)));
        }
        if (deciding != null && (staged < 0 || !deciding.equals(policy(staged)))) {
            b.setDecidingPolicy(deciding);
        }
        return b.setRuleId(text.decidingRuleId(stagedCode)).build();
    }
}
