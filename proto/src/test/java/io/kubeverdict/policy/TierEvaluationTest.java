// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.port;
import static io.kubeverdict.policy.Snapshots.rule;
import static io.kubeverdict.policy.Snapshots.tier;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.TierStep;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Admin / NetworkPolicy / baseline tiers: DENY and PASS rules, tier default actions. */
class TierEvaluationTest {

    static final NodeSnapshot SNAPSHOT = NodeSnapshot.newBuilder()
            .setNode("n1")
            .addPolicies(policy(
                    "admin",
                    "deny-bad",
                    List.of(rule(Action.DENY, "ingress[0]", List.of(block("10.66.0.0/16")), List.of())),
                    List.of()))
            .addPolicies(policy(
                    "admin",
                    "pass-ops",
                    List.of(rule(Action.PASS, "ingress[0]", List.of(block("10.77.0.0/16")), List.of())),
                    List.of()))
            .addPolicies(policy(
                    "admin",
                    "allow-mon",
                    List.of(allow(
                            "ingress[0]",
                            List.of(block("10.88.0.0/16"), block("10.77.0.0/16")),
                            List.of(port(Protocol.TCP, 9100)))),
                    List.of()))
            .addPolicies(policy(
                    "admin",
                    "egress-pass-all",
                    List.of(),
                    List.of(rule(Action.PASS, "egress[0]", List.of(), List.of()))))
            .addPolicies(policy(
                    "admin", "pass-all-in", List.of(rule(Action.PASS, "ingress[0]", List.of(), List.of())), List.of()))
            .addPolicies(policy(
                    "default",
                    "t/allow-web",
                    List.of(allow("ingress[0]", List.of(), List.of(port(Protocol.TCP, 80)))),
                    List.of()))
            .addPolicies(policy(
                    "baseline",
                    "deny-egress",
                    List.of(),
                    List.of(rule(Action.DENY, "egress[0]", List.of(block("10.99.0.0/16")), List.of()))))
            .addEndpoints(endpoint(
                    "t/a",
                    List.of("10.1.0.1"),
                    tier(
                            "admin",
                            Action.PASS,
                            List.of("deny-bad", "pass-ops", "allow-mon"),
                            List.of("egress-pass-all")),
                    np(List.of("t/allow-web"), List.of()),
                    tier("baseline", Action.ALLOW, List.of(), List.of("deny-egress"))))
            .addEndpoints(
                    endpoint("t/b", List.of("10.1.0.2"), tier("admin", Action.PASS, List.of("pass-all-in"), List.of())))
            .addEndpoints(
                    endpoint("t/c", List.of("10.1.0.3"), tier("admin", Action.ALLOW, List.of("deny-bad"), List.of())))
            .addEndpoints(endpoint(
                    "t/d",
                    List.of("10.1.0.4"),
                    tier("admin", Action.PASS, List.of("pass-all-in"), List.of()),
                    tier("baseline", Action.DENY, List.of("deny-egress"), List.of())))
            .build();

    static final SnapshotIndex INDEX = SnapshotIndex.compile(SNAPSHOT);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        "admin DENY beats NetworkPolicy allow",
                        "10.66.1.1",
                        "10.1.0.1",
                        80,
                        "DENY ingress: denied by admin/deny-bad ingress[0]"),
                Arguments.of(
                        "admin PASS skips the rest of its tier",
                        "10.77.1.1",
                        "10.1.0.1",
                        9100,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                Arguments.of(
                        "after PASS the NetworkPolicy tier decides",
                        "10.77.1.1",
                        "10.1.0.1",
                        80,
                        "ALLOW ingress: allowed by default/t/allow-web ingress[0]"),
                Arguments.of(
                        "admin ALLOW",
                        "10.88.1.1",
                        "10.1.0.1",
                        9100,
                        "ALLOW ingress: allowed by admin/allow-mon ingress[0]"),
                Arguments.of(
                        "admin default PASS, NetworkPolicy allows",
                        "10.5.5.5",
                        "10.1.0.1",
                        80,
                        "ALLOW ingress: allowed by default/t/allow-web ingress[0]"),
                Arguments.of(
                        "admin default PASS, NetworkPolicy default denies",
                        "10.5.5.5",
                        "10.1.0.1",
                        81,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                Arguments.of(
                        "egress: PASS, skip empty tier, baseline DENY",
                        "10.1.0.1",
                        "10.99.1.1",
                        80,
                        "DENY egress: denied by baseline/deny-egress egress[0]"),
                Arguments.of(
                        "egress: baseline default ALLOW",
                        "10.1.0.1",
                        "10.5.5.5",
                        80,
                        "ALLOW egress: no rule matched: allowed by the default of tier baseline"),
                Arguments.of("every tier passed", "10.5.5.5", "10.1.0.2", 80, "ALLOW ingress: every tier passed"),
                Arguments.of(
                        "tier default ALLOW",
                        "10.5.5.5",
                        "10.1.0.3",
                        80,
                        "ALLOW ingress: no rule matched: allowed by the default of tier admin"),
                Arguments.of(
                        "DENY rule before tier default ALLOW",
                        "10.66.0.1",
                        "10.1.0.3",
                        80,
                        "DENY ingress: denied by admin/deny-bad ingress[0]"),
                Arguments.of(
                        "PASS then a tier whose policy has no inbound rules",
                        "10.5.5.5",
                        "10.1.0.4",
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier baseline"));
    }

    @org.junit.jupiter.api.Test
    void explainCountsAnEndpointWhoseTiersAllPassedAsIsolated() {
        var e = new Explainer(INDEX).explain(Snapshots.tuple("10.5.5.5", "10.1.0.2", TCP, 80));

        assertThat(e.getIngress().getIsolated()).isTrue();
        assertThat(e.getIngress().getReason()).isEqualTo("passed by admin/pass-all-in ingress[0] → every tier passed");
        assertThat(e.getIngress().getPassedList())
                .containsExactly(TierStep.newBuilder()
                        .setTier("admin")
                        .setPolicy(PolicyId.newBuilder().setTier("admin").setName("pass-all-in"))
                        .setRuleId("ingress[0]")
                        .setAction(Action.PASS)
                        .build());
        assertThat(e.getVerdict()).isEqualTo(io.kubeverdict.proto.v1.Verdict.VERDICT_ALLOW);
        assertThat(e.getIngress().hasPolicy()).isFalse();
    }

    @org.junit.jupiter.api.Test
    void explainNamesThePassThatLedToTheDecision() {
        var e = new Explainer(INDEX).explain(Snapshots.tuple("10.77.1.1", "10.1.0.1", TCP, 80));

        assertThat(e.getIngress().getReason())
                .isEqualTo("passed by admin/pass-ops ingress[0] → allowed by default/t/allow-web ingress[0]");
        assertThat(e.getIngress().getPolicy())
                .isEqualTo(PolicyId.newBuilder()
                        .setTier("default")
                        .setName("t/allow-web")
                        .build());
        assertThat(e.getIngress().getPassedList())
                .extracting(TierStep::getRuleId)
                .containsExactly("ingress[0]");
        assertThat(e.getIngress().getPassedList())
                .extracting(s -> s.getPolicy().getName())
                .containsExactly("pass-ops");
    }

    @org.junit.jupiter.api.Test
    void explainNamesATierWhoseDefaultPassed() {
        // t/a egress: admin egress-pass-all passes by rule, the NetworkPolicy tier has no egress
        // policy (skipped), baseline's deny rule does not match and its default allows.
        var e = new Explainer(INDEX).explain(Snapshots.tuple("10.1.0.1", "10.5.5.5", TCP, 80));
        assertThat(e.getEgress().getReason())
                .isEqualTo("passed by admin/egress-pass-all egress[0] → "
                        + "no rule matched: allowed by the default of tier baseline");

        // t/d ingress: the admin rule passes; baseline lists a policy without inbound rules: its default denies.
        var d = new Explainer(INDEX).explain(Snapshots.tuple("10.5.5.5", "10.1.0.4", TCP, 80));
        assertThat(d.getIngress().getPassedList()).hasSize(1);
        assertThat(d.getIngress().getVerdict()).isEqualTo(io.kubeverdict.proto.v1.Verdict.VERDICT_DENY);

        // t/a ingress from nowhere special: admin's default passes, then the NetworkPolicy decides.
        var a = new Explainer(INDEX).explain(Snapshots.tuple("10.5.5.5", "10.1.0.1", TCP, 81));
        assertThat(a.getIngress().getPassedList())
                .containsExactly(TierStep.newBuilder()
                        .setTier("admin")
                        .setAction(Action.PASS)
                        .build());
        assertThat(a.getIngress().getReason())
                .isEqualTo("admin: no rule matched, its default passes → "
                        + "no rule matched: denied by the default of tier default");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(String name, String src, String dst, int port, String expected) {
        assertThat(new DecisionText(INDEX).describe(INDEX.decide(packet(src, dst, TCP, port))))
                .isEqualTo(expected);
    }
}
