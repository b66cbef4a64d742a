// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.namedSet;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.range;
import static io.kubeverdict.policy.Snapshots.set;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Unusable parts of a snapshot are skipped and counted, and never make more traffic allowed. */
class CompileProblemsTest {

    private static SnapshotIndex index(Rule rule, String... setMembers) {
        return SnapshotIndex.compile(NodeSnapshot.newBuilder()
                .addIpSets(ipSet("s", setMembers))
                .addIpSets(namedSet("named", "10.0.0.1,tcp:80", "10.0.0.1,icmp:80", "10.0.0.1,tcp:0", "junk"))
                .addPolicies(policy("default", "ns/p", List.of(rule), List.of()))
                .addEndpoints(endpoint("ns/a", List.of("10.0.0.1", "not-an-ip"), np(List.of("ns/p"), List.of())))
                .addEndpoints(endpoint("ns/b", List.of("10.0.0.1")))
                .build());
    }

    private static boolean allowed(SnapshotIndex index, String src) {
        return Decision.allowed(index.decide(packet(src, "10.0.0.1", TCP, 80)));
    }

    @Test
    void invalidMembersAndAddressesAreSkippedAndCounted() {
        SnapshotIndex index =
                index(allow("ingress[0]", List.of(set("s")), List.of()), "10.1.0.1", "10.1.0.300", "", "fd00::1::2");

        assertThat(allowed(index, "10.1.0.1")).isTrue();
        assertThat(allowed(index, "10.1.0.2")).isFalse();
        // 3 bad members of s, 3 bad named members (icmp, port 0, junk), 1 bad endpoint IP, 1 duplicate address.
        assertThat(index.problemCount()).isEqualTo(8);
        assertThat(index.problems())
                .anyMatch(p -> p.contains("10.1.0.300"))
                .anyMatch(p -> p.contains("ns/b") && p.contains("already belongs to ns/a"));
        assertThat(index.endpointCount()).isEqualTo(2);
    }

    @Test
    void anInvalidExceptDropsItsWholeBlock() {
        SnapshotIndex index =
                index(allow("ingress[0]", List.of(block("10.2.0.0/16", "10.2.1.0/24", "10.2.2.0/33")), List.of()));

        assertThat(allowed(index, "10.2.3.1")).isFalse();
        assertThat(index.problems()).anyMatch(p -> p.contains("10.2.2.0/33"));
    }

    @Test
    void anInvalidCidrMatchesNothingButOtherPeersStillDo() {
        SnapshotIndex index =
                index(allow("ingress[0]", List.of(block("10.2.0.0/99"), set("s")), List.of()), "10.3.0.1");

        assertThat(allowed(index, "10.2.0.1")).isFalse();
        assertThat(allowed(index, "10.3.0.1")).isTrue();
    }

    @Test
    void aSetOfTheWrongTypeMatchesNothing() {
        SnapshotIndex asPeer = index(allow("ingress[0]", List.of(set("named")), List.of()));
        SnapshotIndex asNamedPort = index(
                allow(
                        "ingress[0]",
                        List.of(),
                        List.of(PortMatch.newBuilder().setNamedPortIpSetId("s").build())),
                "10.0.0.1");

        assertThat(allowed(asPeer, "10.0.0.1")).isFalse();
        assertThat(allowed(asNamedPort, "10.9.9.9")).isFalse();
        assertThat(asNamedPort.problems()).anyMatch(p -> p.contains("not of type IP_AND_PORT"));
    }

    @Test
    void invalidPortClausesMatchNothingAndDoNotEmptyThePortList() {
        SnapshotIndex index = index(allow(
                "ingress[0]",
                List.of(),
                List.of(
                        range(Protocol.TCP, 90, 80),
                        PortMatch.newBuilder()
                                .setProtocol(Protocol.PROTOCOL_UNSPECIFIED)
                                .setPort(80)
                                .build())));

        assertThat(allowed(index, "10.9.9.9")).isFalse();
        assertThat(Decision.allowed(index.decide(packet("10.9.9.9", "10.0.0.1", Snapshots.ICMP, 0))))
                .isFalse();
    }

    @Test
    void anUnspecifiedRuleActionDenies() {
        SnapshotIndex index = index(
                Rule.newBuilder().setRuleId("ingress[0]").setAllPeers(true).build());

        int code = index.decide(packet("10.9.9.9", "10.0.0.1", TCP, 80));
        assertThat(Decision.allowed(code)).isFalse();
        assertThat(new DecisionText(index).describe(code)).isEqualTo("DENY ingress: denied by default/ns/p ingress[0]");
        assertThat(index.problems()).anyMatch(p -> p.contains("treated as DENY"));
    }

    @Test
    void allPeersDoesNotWidenAGivenPeerList() {
        Rule rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId("ingress[0]")
                .setAllPeers(true)
                .addPeers(set("s"))
                .build();
        SnapshotIndex index = index(rule, "10.1.0.1");

        assertThat(allowed(index, "10.1.0.1")).isTrue();
        assertThat(allowed(index, "10.1.0.2")).isFalse();
    }

    @Test
    void anEmptySnapshotAllowsEverything() {
        SnapshotIndex index = SnapshotIndex.compile(NodeSnapshot.getDefaultInstance());

        assertThat(new DecisionText(index).describe(index.decide(packet("10.0.0.1", "10.0.0.2", TCP, 80))))
                .isEqualTo("ALLOW: no local endpoint");
        assertThat(index.problemCount()).isZero();
    }

    @Test
    void moreEndpointsThanAnEntryNumbersFailTheCompileInsteadOfLosingOne() {
        // Losing an endpoint would leave its pod unisolated; failing keeps the agent on its last index.
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder();
        for (int e = 0; e <= AddressEntry.MAX_ENDPOINTS; e++) {
            b.addEndpoints(endpoint("ns/p" + e, List.of("10.1." + (e >> 8) + "." + (e & 0xFF))));
        }

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> SnapshotIndex.compile(b.build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65534 local endpoints");
        b.removeEndpoints(AddressEntry.MAX_ENDPOINTS);
        assertThat(SnapshotIndex.compile(b.build()).endpointCount()).isEqualTo(AddressEntry.MAX_ENDPOINTS);
    }
}
