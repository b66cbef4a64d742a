// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PartialVerdictsTest {
    private static final DirectionExplanation NOT_EVALUATED = DirectionExplanation.newBuilder()
            .setEvaluated(false)
            .setVerdict(Verdict.VERDICT_ALLOW)
            .build();
    private static final DirectionExplanation NOT_ISOLATED = DirectionExplanation.newBuilder()
            .setEvaluated(true)
            .setVerdict(Verdict.VERDICT_ALLOW)
            .setReason("not isolated")
            .build();
    private static final DirectionExplanation ALLOWED_BY_RULE = DirectionExplanation.newBuilder()
            .setEvaluated(true)
            .setIsolated(true)
            .setVerdict(Verdict.VERDICT_ALLOW)
            .setPolicy(PolicyId.newBuilder().setTier("default").setName("x/allow"))
            .setRuleId("ingress[0]")
            .build();
    private static final DirectionExplanation DENIED = DirectionExplanation.newBuilder()
            .setEvaluated(true)
            .setIsolated(true)
            .setVerdict(Verdict.VERDICT_DENY)
            .setDecidingTier("default")
            .build();

    /** x/c on n1 -> x/b on n2, both policed unless said otherwise. */
    private static Optional<PartialVerdicts.Placed> place(String pod, boolean bPoliced) {
        return switch (pod) {
            case "x/c" -> Optional.of(new PartialVerdicts.Placed("n1", true, Map.of("pod", "c")));
            case "x/b" -> Optional.of(new PartialVerdicts.Placed("n2", bPoliced, Map.of("pod", "b")));
            default -> Optional.empty();
        };
    }

    private static VerdictEvent event(String node, DirectionExplanation egress, DirectionExplanation ingress) {
        boolean denied = (egress.getEvaluated() && egress.getVerdict() == Verdict.VERDICT_DENY)
                || (ingress.getEvaluated() && ingress.getVerdict() == Verdict.VERDICT_DENY);
        return VerdictEvent.newBuilder()
                .setNode(node)
                .setExplanation(Explanation.newBuilder()
                        .setTuple(Tuple.newBuilder()
                                .setSrcIp("10.0.1.12")
                                .setDstIp("10.0.2.11")
                                .setProtocol(6)
                                .setDstPort(80))
                        .setSource(EndpointId.newBuilder().setNamespace("x").setPod("c"))
                        .setDestination(
                                EndpointId.newBuilder().setNamespace("x").setPod("b"))
                        .setEgress(egress)
                        .setIngress(ingress)
                        .setVerdict(denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW))
                .build();
    }

    private static Optional<VerdictEvent> complete(VerdictEvent e, boolean bPoliced, DirectionExplanation far) {
        return PartialVerdicts.complete(e, pod -> place(pod, bPoliced), (node, t, egress) -> far);
    }

    @Test
    void theSourceNodesAllowedReportIsLeftToTheDestinationNode() {
        assertThat(complete(event("n1", NOT_ISOLATED, NOT_EVALUATED), true, ALLOWED_BY_RULE))
                .isEmpty();
    }

    @Test
    void theDestinationNodesReportGetsTheSourcesEgressDecided() {
        VerdictEvent whole = complete(event("n2", NOT_EVALUATED, ALLOWED_BY_RULE), true, NOT_ISOLATED)
                .orElseThrow();
        assertThat(whole.getExplanation().getEgress()).isEqualTo(NOT_ISOLATED);
        assertThat(DecidingRule.text(whole.getExplanation())).isEqualTo("ingress x/allow ingress[0]");
    }

    @Test
    void aDenialAtTheSourceIsKeptTheOtherNodeNeverSawIt() {
        VerdictEvent whole = complete(event("n1", DENIED, NOT_EVALUATED), true, ALLOWED_BY_RULE)
                .orElseThrow();
        assertThat(whole.getExplanation().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(DecidingRule.direction(whole.getExplanation())).isEqualTo("egress");
    }

    @Test
    void aFarSideThatDeniesMakesTheRecordADenial() {
        VerdictEvent whole = complete(event("n2", NOT_EVALUATED, ALLOWED_BY_RULE), true, DENIED)
                .orElseThrow();
        assertThat(whole.getExplanation().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
    }

    @Test
    void anUnpolicedFarSideIsNotAskedAndTheReportIsKept() {
        VerdictEvent e = event("n1", NOT_ISOLATED, NOT_EVALUATED);
        assertThat(complete(e, false, DENIED)).contains(e);
    }
}
