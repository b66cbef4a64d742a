// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.StagedText;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Verdict;

/**
 * The would-be part of an explained verdict the staged policies changed. A ring keeps decision
 * codes, which mean something only with the index that produced them, and the publisher explains
 * with the generation current when it gets there; so the staged decision is made again with that
 * generation. When that one no longer differs (a change came in between), the event still says
 * the verdict flipped, without a policy, rather than naming the wrong one.
 */
final class StagedExplanations {

    private StagedExplanations() {}

    static StagedVerdict wouldBe(StateHolder.Generation current, PacketTuple packet, Verdict given) {
        Verdict flipped = given == Verdict.VERDICT_ALLOW ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW;
        if (current != null) {
            SnapshotIndex index = current.state().index();
            int code = index.decideStaged(packet, current.learned());
            if (code != Decision.NOT_STAGED && Decision.allowed(code) == (flipped == Verdict.VERDICT_ALLOW)) {
                return new StagedText(index).verdict(code, packet);
            }
        }
        return StagedVerdict.newBuilder()
                .setVerdict(flipped)
                .setReason("the staged policies changed before this verdict was explained")
                .build();
    }
}
