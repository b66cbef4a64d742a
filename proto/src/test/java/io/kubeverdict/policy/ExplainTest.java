// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.UDP;
import static io.kubeverdict.policy.Snapshots.tuple;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Verdict;
import org.junit.jupiter.api.Test;

class ExplainTest {

    private final Explainer index = new Explainer(SnapshotIndexTest.INDEX);

    @Test
    void explainsBothDirectionsEvenWhenEgressAlreadyDenies() {
        Explanation e = index.explain(tuple("10.0.0.3", "10.0.0.1", TCP, 80));

        assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(e.getSource())
                .isEqualTo(EndpointId.newBuilder().setNamespace("x").setPod("c").build());
        assertThat(e.getDestination())
                .isEqualTo(EndpointId.newBuilder().setNamespace("x").setPod("a").build());
        assertThat(e.getEgress())
                .isEqualTo(DirectionExplanation.newBuilder()
                        .setEvaluated(true)
                        .setIsolated(true)
                        .setVerdict(Verdict.VERDICT_DENY)
                        .setReason("no rule matched: denied by the default of tier default")
                        .setDecidingTier("default")
                        .build());
        assertThat(e.getIngress().getEvaluated()).isTrue();
        assertThat(e.getIngress().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
    }

    @Test
    void namesTheDecidingPolicyAndRule() {
        Explanation e = index.explain(tuple("10.0.0.2", "10.0.0.1", TCP, 80));

        assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(e.getIngress())
                .isEqualTo(DirectionExplanation.newBuilder()
                        .setEvaluated(true)
                        .setIsolated(true)
                        .setVerdict(Verdict.VERDICT_ALLOW)
                        .setPolicy(PolicyId.newBuilder().setTier("default").setName("x/allow-from-b"))
                        .setRuleId("ingress[0]")
                        .setReason("allowed by default/x/allow-from-b ingress[0]")
                        .setDecidingTier("default")
                        .build());
        assertThat(e.getEgress())
                .isEqualTo(DirectionExplanation.newBuilder()
                        .setEvaluated(true)
                        .setIsolated(false)
                        .setVerdict(Verdict.VERDICT_ALLOW)
                        .setReason("not isolated")
                        .build());
    }

    @Test
    void remoteSideIsNotEvaluated() {
        Explanation e = index.explain(tuple("8.8.8.8", "10.0.0.1", TCP, 80));

        assertThat(e.hasSource()).isFalse();
        assertThat(e.getEgress().getEvaluated()).isFalse();
        assertThat(e.getIngress().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
    }

    @Test
    void combinesTheHalvesFromTwoNodes() {
        // Source x/c on one node (egress allows udp 53), destination y/a on another.
        Explanation sourceSide = index.explain(tuple("10.0.0.3", "10.0.1.1", UDP, 53));
        Explanation destSide = index.explain(tuple("10.0.0.3", "10.0.1.1", UDP, 53));
        Explanation onlySource = sourceSide.toBuilder()
                .clearDestination()
                .setIngress(DirectionExplanation.newBuilder().setEvaluated(false))
                .build();
        Explanation onlyDest = destSide.toBuilder()
                .clearSource()
                .setEgress(DirectionExplanation.newBuilder().setEvaluated(false))
                .build();

        Explanation combined = Explanations.combine(onlySource, onlyDest);

        assertThat(combined.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(combined.getSource().getPod()).isEqualTo("c");
        assertThat(combined.getDestination().getPod()).isEqualTo("a");
        assertThat(combined.getEgress()).isEqualTo(sourceSide.getEgress());
        assertThat(combined.getIngress()).isEqualTo(destSide.getIngress());
    }

    @Test
    void combinedVerdictDeniesWhenOneHalfDenies() {
        Explanation sourceSide = index.explain(tuple("10.0.0.3", "10.0.1.1", TCP, 80)); // egress denies
        Explanation destSide = index.explain(tuple("8.8.8.8", "10.0.1.1", UDP, 53));

        assertThat(Explanations.combine(sourceSide, destSide).getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(Explanations.combine(destSide, destSide).getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(Explanations.combine(
                        DirectionExplanation.getDefaultInstance(), DirectionExplanation.getDefaultInstance()))
                .isEqualTo(Verdict.VERDICT_ALLOW);
    }

    @Test
    void rejectsUnparseableAndMixedFamilyTuples() {
        assertThatThrownBy(() -> index.explain(tuple("10.0.0.300", "10.0.0.1", TCP, 80)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> index.explain(tuple("10.0.0.2", "fd00::1", TCP, 80)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void explainOfAPacketCarriesCanonicalAddresses() {
        Explanation e = index.explain(Snapshots.packet("FD00:0:0::2", "fd00::1", TCP, 80));

        assertThat(e.getTuple().getSrcIp()).isEqualTo("fd00::2");
        assertThat(e.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
    }
}
