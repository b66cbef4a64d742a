// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.ICMP;
import static io.kubeverdict.policy.Snapshots.ICMPV6;
import static io.kubeverdict.policy.Snapshots.SCTP;
import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.UDP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.allowNobody;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.named;
import static io.kubeverdict.policy.Snapshots.namedSet;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.port;
import static io.kubeverdict.policy.Snapshots.range;
import static io.kubeverdict.policy.Snapshots.set;
import static io.kubeverdict.policy.Snapshots.tuple;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** NetworkPolicy-tier semantics, table-driven over one node snapshot. */
class SnapshotIndexTest {

    static final NodeSnapshot SNAPSHOT = NodeSnapshot.newBuilder()
            .setNode("n1")
            .addIpSets(ipSet("pods-b", "10.0.0.2", "fd00::2", "bogus"))
            .addIpSets(ipSet("pods-x", "10.0.0.1", "10.0.0.2", "10.0.0.3", "fd00::1", "fd00::2", "fd00::3"))
            .addIpSets(namedSet("np-web", "10.0.1.2,tcp:8080", "fd00::12,tcp:8080", "10.0.1.2,udp:5353"))
            .addPolicies(policy(
                    "default",
                    "x/allow-from-b",
                    List.of(allow("ingress[0]", List.of(set("pods-b")), List.of(port(Protocol.TCP, 80)))),
                    List.of()))
            .addPolicies(policy(
                    "default",
                    "x/egress-dns",
                    List.of(),
                    List.of(allow("egress[0]", List.of(), List.of(port(Protocol.UDP, 53), port(Protocol.TCP, 53))))))
            .addPolicies(policy("default", "x/deny-all", List.of(), List.of()))
            .addPolicies(policy(
                    "default",
                    "y/multi",
                    List.of(allow(
                            "ingress[0]",
                            List.of(
                                    block("192.168.0.0/16", "192.168.1.0/24"),
                                    block("fd00:1::/32", "fd00:1:1::/48"),
                                    set("pods-x")),
                            List.of(port(Protocol.TCP, 80), port(Protocol.UDP, 53), range(Protocol.SCTP, 9000, 9010)))),
                    List.of()))
            .addPolicies(policy(
                    "default", "y/named", List.of(allow("ingress[0]", List.of(), List.of(named("np-web")))), List.of()))
            .addPolicies(policy(
                    "default",
                    "y/any-from-b",
                    List.of(allow("ingress[0]", List.of(set("pods-b")), List.of())),
                    List.of()))
            .addPolicies(policy(
                    "default",
                    "y/missing-set",
                    List.of(
                            allow("ingress[0]", List.of(set("nope")), List.of()),
                            allowNobody("ingress[1]"),
                            allow("ingress[2]", List.of(), List.of(named("nope-named")))),
                    List.of()))
            .addPolicies(policy(
                    "default",
                    "y/all-ports",
                    List.of(allow("ingress[0]", List.of(block("0.0.0.0/0")), List.of(port(Protocol.UDP, 0)))),
                    List.of()))
            .addEndpoints(endpoint("x/a", List.of("10.0.0.1", "fd00::1"), np(List.of("x/allow-from-b"), List.of())))
            .addEndpoints(endpoint("x/b", List.of("10.0.0.2", "fd00::2")))
            .addEndpoints(
                    endpoint("x/c", List.of("10.0.0.3", "fd00::3"), np(List.of("x/deny-all"), List.of("x/egress-dns"))))
            .addEndpoints(endpoint("y/a", List.of("10.0.1.1", "fd00::11"), np(List.of("y/multi"), List.of())))
            .addEndpoints(
                    endpoint("y/b", List.of("10.0.1.2", "fd00::12"), np(List.of("y/named", "y/any-from-b"), List.of())))
            .addEndpoints(
                    endpoint("y/c", List.of("10.0.1.3"), np(List.of("y/missing-set", "y/missing-policy"), List.of())))
            .addEndpoints(endpoint("y/d", List.of("10.0.1.4"), np(List.of("y/all-ports"), List.of())))
            .build();

    static final SnapshotIndex INDEX = SnapshotIndex.compile(SNAPSHOT);

    static Stream<Arguments> cases() {
        return Stream.of(
                // not isolated / not local
                c("no endpoint on either side", "8.8.8.8", "9.9.9.9", TCP, 80, "ALLOW: no local endpoint"),
                c(
                        "source not isolated, destination remote",
                        "10.0.0.2",
                        "8.8.8.8",
                        TCP,
                        443,
                        "ALLOW egress: not isolated"),
                c("remote source to non-isolated pod", "8.8.8.8", "10.0.0.2", TCP, 1, "ALLOW ingress: not isolated"),
                // ingress isolation
                c(
                        "ingress allowed by peer set and port",
                        "10.0.0.2",
                        "10.0.0.1",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/x/allow-from-b ingress[0]"),
                c(
                        "ingress: wrong port",
                        "10.0.0.2",
                        "10.0.0.1",
                        TCP,
                        81,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "ingress: wrong protocol",
                        "10.0.0.2",
                        "10.0.0.1",
                        UDP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "ingress: peer not in set",
                        "8.8.8.8",
                        "10.0.0.1",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "ingress isolated with no rules",
                        "10.0.0.2",
                        "10.0.0.3",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // egress isolation
                c(
                        "egress allowed udp 53",
                        "10.0.0.3",
                        "8.8.8.8",
                        UDP,
                        53,
                        "ALLOW egress: allowed by default/x/egress-dns egress[0]"),
                c(
                        "egress allowed tcp 53 (ports OR)",
                        "10.0.0.3",
                        "8.8.8.8",
                        TCP,
                        53,
                        "ALLOW egress: allowed by default/x/egress-dns egress[0]"),
                c(
                        "egress denied tcp 54",
                        "10.0.0.3",
                        "8.8.8.8",
                        TCP,
                        54,
                        "DENY egress: no rule matched: denied by the default of tier default"),
                c(
                        "egress denied icmp (rule has ports)",
                        "10.0.0.3",
                        "8.8.8.8",
                        ICMP,
                        0,
                        "DENY egress: no rule matched: denied by the default of tier default"),
                // both directions
                c(
                        "egress denies though ingress would allow",
                        "10.0.0.3",
                        "10.0.1.1",
                        TCP,
                        80,
                        "DENY egress: no rule matched: denied by the default of tier default"),
                c(
                        "egress allows, destination not isolated",
                        "10.0.0.3",
                        "10.0.0.2",
                        UDP,
                        53,
                        "ALLOW egress: allowed by default/x/egress-dns egress[0]"),
                c(
                        "egress and ingress allow",
                        "10.0.0.3",
                        "10.0.1.1",
                        UDP,
                        53,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "egress allows, ingress denies",
                        "10.0.0.3",
                        "10.0.0.1",
                        UDP,
                        53,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // peers OR: ipBlock with except, set
                c(
                        "ipBlock v4 inside",
                        "192.168.2.5",
                        "10.0.1.1",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "ipBlock v4 except",
                        "192.168.1.5",
                        "10.0.1.1",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "ipBlock v4 edge of except",
                        "192.168.0.255",
                        "10.0.1.1",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "ipBlock v4 outside",
                        "10.9.9.9",
                        "10.0.1.1",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "peer set OR'ed with blocks",
                        "10.0.0.1",
                        "10.0.1.1",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "ipBlock v6 inside",
                        "fd00:1:2::5",
                        "fd00::11",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "ipBlock v6 except",
                        "fd00:1:1::5",
                        "fd00::11",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "ipBlock v6 outside",
                        "fd00:2::1",
                        "fd00::11",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "peer set v6 member (dual-stack)",
                        "fd00::2",
                        "fd00::11",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "v4 block does not match v6 address",
                        "::ffff:192.168.2.5",
                        "fd00::11",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // endPort, UDP, SCTP
                c(
                        "sctp range start",
                        "192.168.2.5",
                        "10.0.1.1",
                        SCTP,
                        9000,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "sctp range end",
                        "192.168.2.5",
                        "10.0.1.1",
                        SCTP,
                        9010,
                        "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "sctp above range",
                        "192.168.2.5",
                        "10.0.1.1",
                        SCTP,
                        9011,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "sctp below range",
                        "192.168.2.5",
                        "10.0.1.1",
                        SCTP,
                        8999,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "sctp on a tcp port",
                        "192.168.2.5",
                        "10.0.1.1",
                        SCTP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c("udp 53", "192.168.2.5", "10.0.1.1", UDP, 53, "ALLOW ingress: allowed by default/y/multi ingress[0]"),
                c(
                        "udp 54",
                        "192.168.2.5",
                        "10.0.1.1",
                        UDP,
                        54,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "port 0 = every udp port",
                        "8.8.8.8",
                        "10.0.1.4",
                        UDP,
                        65535,
                        "ALLOW ingress: allowed by default/y/all-ports ingress[0]"),
                c(
                        "port 0 of udp is not tcp",
                        "8.8.8.8",
                        "10.0.1.4",
                        TCP,
                        65535,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // named ports
                c(
                        "named port v4",
                        "8.8.8.8",
                        "10.0.1.2",
                        TCP,
                        8080,
                        "ALLOW ingress: allowed by default/y/named ingress[0]"),
                c(
                        "named port v4 udp member",
                        "8.8.8.8",
                        "10.0.1.2",
                        UDP,
                        5353,
                        "ALLOW ingress: allowed by default/y/named ingress[0]"),
                c(
                        "named port wrong port",
                        "8.8.8.8",
                        "10.0.1.2",
                        TCP,
                        8081,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "named port wrong protocol",
                        "8.8.8.8",
                        "10.0.1.2",
                        UDP,
                        8080,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "named port v6",
                        "2001:db8::1",
                        "fd00::12",
                        TCP,
                        8080,
                        "ALLOW ingress: allowed by default/y/named ingress[0]"),
                c(
                        "named port is per destination address",
                        "8.8.8.8",
                        "10.0.1.1",
                        TCP,
                        8080,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // ICMP only matches rules without ports
                c(
                        "icmp by a rule without ports (second policy)",
                        "10.0.0.2",
                        "10.0.1.2",
                        ICMP,
                        0,
                        "ALLOW ingress: allowed by default/y/any-from-b ingress[0]"),
                c(
                        "icmpv6 by a rule without ports",
                        "fd00::2",
                        "fd00::12",
                        ICMPV6,
                        0,
                        "ALLOW ingress: allowed by default/y/any-from-b ingress[0]"),
                c(
                        "icmp from outside the set",
                        "10.0.0.1",
                        "10.0.1.2",
                        ICMP,
                        0,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "icmp vs rule with ports",
                        "10.0.0.2",
                        "10.0.0.1",
                        ICMP,
                        0,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "tcp by a rule without ports",
                        "10.0.0.2",
                        "10.0.1.2",
                        TCP,
                        12345,
                        "ALLOW ingress: allowed by default/y/any-from-b ingress[0]"),
                // missing references never widen
                c(
                        "missing set, peerless rule, missing named set, missing policy",
                        "10.0.0.2",
                        "10.0.1.3",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                c(
                        "missing everything, icmp",
                        "10.0.0.2",
                        "10.0.1.3",
                        ICMP,
                        0,
                        "DENY ingress: no rule matched: denied by the default of tier default"),
                // dual-stack: the same pod by its v6 address
                c(
                        "dual-stack ingress v6",
                        "fd00::2",
                        "fd00::1",
                        TCP,
                        80,
                        "ALLOW ingress: allowed by default/x/allow-from-b ingress[0]"),
                c(
                        "dual-stack ingress v6 denied",
                        "fd00::3",
                        "fd00::1",
                        TCP,
                        80,
                        "DENY egress: no rule matched: denied by the default of tier default"),
                c(
                        "dual-stack egress v6",
                        "fd00::3",
                        "2001:db8::53",
                        UDP,
                        53,
                        "ALLOW egress: allowed by default/x/egress-dns egress[0]"),
                c(
                        "invalid set member was skipped",
                        "10.0.0.9",
                        "10.0.0.1",
                        TCP,
                        80,
                        "DENY ingress: no rule matched: denied by the default of tier default"));
    }

    private static Arguments c(String name, String src, String dst, int protocol, int port, String expected) {
        return Arguments.of(name, src, dst, protocol, port, expected);
    }

    @ParameterizedTest(name = "{0}: {1} -> {2} proto {3} port {4}")
    @MethodSource("cases")
    void decides(String name, String src, String dst, int protocol, int port, String expected) {
        int code = INDEX.decide(packet(src, dst, protocol, port));

        assertThat(new DecisionText(INDEX).describe(code)).isEqualTo(expected);
        assertThat(Decision.allowed(code)).isEqualTo(expected.startsWith("ALLOW"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void explainAgreesWithDecide(String name, String src, String dst, int protocol, int port, String expected) {
        var explanation = new Explainer(INDEX).explain(tuple(src, dst, protocol, port));

        assertThat(explanation.getVerdict().name())
                .isEqualTo(expected.startsWith("ALLOW") ? "VERDICT_ALLOW" : "VERDICT_DENY");
        assertThat(explanation.getTuple()).isEqualTo(tuple(src, dst, protocol, port));
    }
}
