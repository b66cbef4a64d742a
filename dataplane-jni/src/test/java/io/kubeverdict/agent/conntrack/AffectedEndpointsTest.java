// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.agent.conntrack.TestSnapshots.allowFrom;
import static io.kubeverdict.agent.conntrack.TestSnapshots.endpoint;
import static io.kubeverdict.agent.conntrack.TestSnapshots.node;
import static io.kubeverdict.agent.conntrack.TestSnapshots.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.conntrack.AffectedEndpoints.Target;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import java.util.List;
import org.junit.jupiter.api.Test;

class AffectedEndpointsTest {
    /** b (policy pb, set sa) and c (policy pc, set sc) are selected; a is not. */
    private static final NodeSnapshot BEFORE = node().addIpSets(set("sa", "10.0.0.1"))
            .addIpSets(set("sc", "10.0.0.9"))
            .addPolicies(allowFrom("pb", "sa", 80))
            .addPolicies(allowFrom("pc", "sc", 80))
            .addEndpoints(endpoint("a", "10.0.0.1"))
            .addEndpoints(endpoint("b", List.of("10.0.0.2", "fd00::2"), "pb"))
            .addEndpoints(endpoint("c", "10.0.0.3", "pc"))
            .build();

    private static List<String> pods(List<Target> targets) {
        return targets.stream()
                .map(t -> t.id().getPod() + (t.unjudged() ? "*" : ""))
                .toList();
    }

    @Test
    void theSameStateAffectsNobody() {
        assertThat(AffectedEndpoints.between(BEFORE, BEFORE.toBuilder().build()))
                .isEmpty();
    }

    @Test
    void aPolicyChangeAffectsTheEndpointsItSelects() {
        NodeSnapshot after =
                BEFORE.toBuilder().setPolicies(0, allowFrom("pb", "sa", 81)).build();
        List<Target> targets = AffectedEndpoints.between(BEFORE, after);
        assertThat(pods(targets)).containsExactly("b");
        assertThat(targets.get(0).addresses()).containsExactly(IpAddress.parse("10.0.0.2"), IpAddress.parse("fd00::2"));
    }

    @Test
    void aPeerSetChangeAffectsTheEndpointsWhosePoliciesUseIt() {
        assertThat(pods(AffectedEndpoints.between(
                        BEFORE, BEFORE.toBuilder().setIpSets(0, set("sa")).build())))
                .containsExactly("b");
        assertThat(pods(AffectedEndpoints.between(
                        BEFORE,
                        BEFORE.toBuilder().setIpSets(1, set("sc", "10.0.0.8")).build())))
                .containsExactly("c");
        assertThat(AffectedEndpoints.between(
                        BEFORE,
                        BEFORE.toBuilder().addIpSets(set("unused", "1.2.3.4")).build()))
                .as("a set no policy uses")
                .isEmpty();
    }

    @Test
    void aNamedPortSetChangeAffectsToo() {
        ActivePolicy named = allowFrom("pb", "sa").toBuilder()
                .setPolicy(allowFrom("pb", "sa").getPolicy().toBuilder()
                        .setInboundRules(
                                0,
                                allowFrom("pb", "sa").getPolicy().getInboundRules(0).toBuilder()
                                        .addPorts(PortMatch.newBuilder()
                                                .setProtocol(Protocol.TCP)
                                                .setNamedPortIpSetId("np"))))
                .build();
        NodeSnapshot before = BEFORE.toBuilder()
                .setPolicies(0, named)
                .addIpSets(set("np", "10.0.0.2,tcp:80"))
                .build();
        NodeSnapshot after =
                before.toBuilder().setIpSets(2, set("np", "10.0.0.2,tcp:8080")).build();
        assertThat(pods(AffectedEndpoints.between(before, after))).containsExactly("b");
    }

    @Test
    void tiersAndSelectionChangesAffectTheEndpoint() {
        NodeSnapshot defaultAllows = BEFORE.toBuilder()
                .setEndpoints(
                        2,
                        BEFORE.getEndpoints(2).toBuilder()
                                .setEndpoint(BEFORE.getEndpoints(2).getEndpoint().toBuilder()
                                        .setTiers(
                                                0,
                                                BEFORE.getEndpoints(2).getEndpoint().getTiers(0).toBuilder()
                                                        .setDefaultAction(Action.ALLOW))))
                .build();
        assertThat(pods(AffectedEndpoints.between(BEFORE, defaultAllows))).containsExactly("c");

        NodeSnapshot aSelected = BEFORE.toBuilder()
                .setEndpoints(0, endpoint("a", "10.0.0.1", "pc"))
                .build();
        assertThat(pods(AffectedEndpoints.between(BEFORE, aSelected)))
                .as("newly selected: may have unjudged connections")
                .containsExactly("a*");

        NodeSnapshot cUnselected =
                BEFORE.toBuilder().setEndpoints(2, endpoint("c", "10.0.0.3")).build();
        assertThat(AffectedEndpoints.between(BEFORE, cUnselected))
                .as("unselected: allows everything from its side")
                .isEmpty();

        NodeSnapshot newPod =
                BEFORE.toBuilder().addEndpoints(endpoint("d", "10.0.0.4", "pc")).build();
        assertThat(pods(AffectedEndpoints.between(BEFORE, newPod))).containsExactly("d*");
    }

    @Test
    void anAddressChangeCoversTheOldAndTheNewAddress() {
        NodeSnapshot moved = BEFORE.toBuilder()
                .setEndpoints(2, endpoint("c", "10.0.0.33", "pc"))
                .build();
        List<Target> targets = AffectedEndpoints.between(BEFORE, moved);
        assertThat(pods(targets)).containsExactly("c*");
        assertThat(targets.get(0).addresses())
                .containsExactlyInAnyOrder(IpAddress.parse("10.0.0.33"), IpAddress.parse("10.0.0.3"));
    }

    @Test
    void atStartEverySelectedEndpointCounts() {
        assertThat(pods(AffectedEndpoints.all(BEFORE))).containsExactly("b*", "c*");
    }
}
