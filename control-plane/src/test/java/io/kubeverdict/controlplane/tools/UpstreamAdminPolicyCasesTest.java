// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import static io.kubeverdict.controlplane.fixtures.HouseWorld.anp;
import static io.kubeverdict.controlplane.fixtures.HouseWorld.banp;
import static io.kubeverdict.controlplane.fixtures.HouseWorld.cnp;
import static io.kubeverdict.proto.v1.Protocol.SCTP;
import static io.kubeverdict.proto.v1.Protocol.TCP;
import static io.kubeverdict.proto.v1.Protocol.UDP;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The network-policy-api conformance suite (AdminNetworkPolicy, BaselineAdminNetworkPolicy and
 * ClusterNetworkPolicy: TCP/UDP/SCTP ingress and egress, both directions in one policy,
 * integration with NetworkPolicy and the baseline, priority, inline CIDR peers, named ports, node
 * peers), reconstructed as a table on the {@link HouseWorld} fixture, plus the fail-closed
 * handling of invalid objects. Each case is a sequence of steps with the expected matrix after
 * each, through the incremental calculator, per-node snapshots and SnapshotIndex (the
 * enforcement path); after every step the incremental snapshots must equal a from-scratch
 * calculation. The matrix includes the hostNetwork pods, addressed by their node.
 */
class UpstreamAdminPolicyCasesTest {

    static final String RAVENCLAW = "{matchLabels: {house: ravenclaw}}";
    static final String SLYTHERIN = "{matchLabels: {house: slytherin}}";
    static final String GRYFFINDOR = "{matchLabels: {house: gryffindor}}";
    static final String HUFFLEPUFF = "{matchLabels: {house: hufflepuff}}";

    static Stream<Case> cases() {
        return Stream.of(
                c(
                        "AdminNetworkPolicy ingress TCP: Allow, Deny and Pass, first match by rule order",
                        step(
                                put(anp("""
                    metadata: {name: ingress-tcp}
                    spec:
                      priority: 10
                      subject: {namespaces: %s}
                      ingress:
                      - {name: allow-slytherin-80, action: Allow, from: [{namespaces: %s}], ports: [{portNumber: {protocol: TCP, port: 80}}]}
                      - {name: deny-slytherin-8080, action: Deny, from: [{namespaces: %s}], ports: [{portNumber: {port: 8080}}]}
                      - {name: pass-gryffindor-80, action: Pass, from: [{namespaces: %s}], ports: [{portNumber: {protocol: TCP, port: 80}}]}
                      - {name: deny-gryffindor, action: Deny, from: [{namespaces: %s}], ports: [{portNumber: {port: 80}}, {portNumber: {port: 8080}}]}
                      - {name: deny-hufflepuff, action: Deny, from: [{namespaces: %s}]}
                    """.formatted(
                                                RAVENCLAW, SLYTHERIN, SLYTHERIN, GRYFFINDOR, GRYFFINDOR, HUFFLEPUFF))),
                                probe(TCP, 80, r -> r.peers(ns("hufflepuff"), ns("ravenclaw"), false)),
                                probe(
                                        TCP,
                                        8080,
                                        r -> r.peers(
                                                ns("slytherin")
                                                        .or(ns("gryffindor"))
                                                        .or(ns("hufflepuff")),
                                                ns("ravenclaw"),
                                                false)),
                                probe(UDP, 53, r -> r.peers(ns("hufflepuff"), ns("ravenclaw"), false))),
                        // A NetworkPolicy isolating ravenclaw: the admin Allow still wins, the Pass now reaches it.
                        step(
                                putNp("ravenclaw", """
                    metadata: {name: deny-ingress}
                    spec: {podSelector: {}, policyTypes: [Ingress]}
                    """),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(any(), ns("ravenclaw"), false)
                                                .peers(ns("slytherin"), ns("ravenclaw"), true)
                                                .sameNodeHostsAllowed()),
                                probe(
                                        UDP,
                                        53,
                                        r -> r.peers(any(), ns("ravenclaw"), false)
                                                .sameNodeHostsAllowed()))),
                c(
                        "AdminNetworkPolicy egress UDP, then a NetworkPolicy egress deny in the Pass target",
                        step(
                                put(anp("""
                    metadata: {name: egress-udp}
                    spec:
                      priority: 20
                      subject: {namespaces: %s}
                      egress:
                      - {name: allow-ravenclaw-53, action: Allow, to: [{namespaces: %s}], ports: [{portNumber: {protocol: UDP, port: 53}}]}
                      - {name: deny-ravenclaw-5353, action: Deny, to: [{namespaces: %s}], ports: [{portNumber: {protocol: UDP, port: 5353}}]}
                      - {name: pass-hufflepuff-53, action: Pass, to: [{namespaces: %s}], ports: [{portNumber: {protocol: UDP, port: 53}}]}
                      - {name: deny-hufflepuff, action: Deny, to: [{namespaces: %s}], ports: [{portRange: {protocol: UDP, start: 1, end: 65535}}]}
                    """.formatted(SLYTHERIN, RAVENCLAW, RAVENCLAW, HUFFLEPUFF, HUFFLEPUFF))),
                                probe(UDP, 53, r -> {}),
                                probe(
                                        UDP,
                                        5353,
                                        r -> r.peers(
                                                ns("slytherin"), ns("ravenclaw").or(ns("hufflepuff")), false)),
                                probe(TCP, 80, r -> {})),
                        step(
                                putNp("slytherin", """
                    metadata: {name: deny-egress}
                    spec: {podSelector: {}, policyTypes: [Egress]}
                    """),
                                probe(
                                        UDP,
                                        53,
                                        r -> r.peers(ns("slytherin"), any(), false)
                                                .peers(ns("slytherin"), ns("ravenclaw"), true)),
                                probe(UDP, 5353, r -> r.peers(ns("slytherin"), any(), false)))),
                c(
                        "AdminNetworkPolicy SCTP ingress and UDP egress with port ranges",
                        step(
                                put(anp("""
                    metadata: {name: ranges}
                    spec:
                      priority: 30
                      subject: {namespaces: %s}
                      ingress:
                      - {action: Deny, from: [{namespaces: %s}], ports: [{portRange: {protocol: SCTP, start: 9000, end: 9004}}]}
                      egress:
                      - {action: Deny, to: [{pods: {namespaceSelector: %s, podSelector: {matchLabels: {replica: "1"}}}}], ports: [{portRange: {protocol: UDP, start: 5000, end: 6000}}]}
                    """.formatted(HUFFLEPUFF, GRYFFINDOR, RAVENCLAW))),
                                probe(SCTP, 9003, r -> r.peers(ns("gryffindor"), ns("hufflepuff"), false)),
                                probe(SCTP, 9005, r -> {}),
                                probe(
                                        UDP,
                                        5353,
                                        r -> r.peers(ns("hufflepuff"), is("ravenclaw/luna-lovegood-1"), false)),
                                probe(UDP, 53, r -> {}))),
                c(
                        "AdminNetworkPolicy gress rules: ingress and egress of one subject",
                        step(
                                put(anp("""
                    metadata: {name: gress}
                    spec:
                      priority: 15
                      subject: {pods: {namespaceSelector: %s, podSelector: {matchLabels: {replica: "0"}}}}
                      ingress: [{action: Deny, from: [{namespaces: %s}]}]
                      egress: [{action: Deny, to: [{namespaces: %s}]}]
                    """.formatted(GRYFFINDOR, SLYTHERIN, SLYTHERIN))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(is("gryffindor/harry-potter-0"), ns("slytherin"), false)
                                                .peers(ns("slytherin"), is("gryffindor/harry-potter-0"), false)))),
                c(
                        "AdminNetworkPolicy priority: the lower value wins; equal priorities go by name",
                        step(
                                put(anp("""
                    metadata: {name: allow-80}
                    spec:
                      priority: 5
                      subject: {namespaces: %s}
                      ingress: [{action: Allow, from: [{namespaces: {}}], ports: [{portNumber: {port: 80}}]}]
                    """.formatted(RAVENCLAW)), anp("""
                    metadata: {name: deny-all}
                    spec:
                      priority: 10
                      subject: {namespaces: %s}
                      ingress: [{action: Deny, from: [{namespaces: {}}]}]
                    """.formatted(RAVENCLAW))),
                                probe(TCP, 80, r -> r.peers(any(), ns("ravenclaw"), true)),
                                probe(TCP, 8080, r -> r.peers(houses(), ns("ravenclaw"), false))),
                        step(
                                put(anp("""
                    metadata: {name: allow-80}
                    spec:
                      priority: 20
                      subject: {namespaces: %s}
                      ingress: [{action: Allow, from: [{namespaces: {}}], ports: [{portNumber: {port: 80}}]}]
                    """.formatted(RAVENCLAW))),
                                probe(TCP, 80, r -> r.peers(houses(), ns("ravenclaw"), false))),
                        step(
                                put(anp("""
                    metadata: {name: allow-80}
                    spec:
                      priority: 10
                      subject: {namespaces: %s}
                      ingress: [{action: Allow, from: [{namespaces: {}}], ports: [{portNumber: {port: 80}}]}]
                    """.formatted(RAVENCLAW))),
                                probe(TCP, 80, r -> {}),
                                problems(p -> assertThat(p)
                                        .anySatisfy(x -> assertThat(x.toString())
                                                .contains("AdminNetworkPolicy allow-80: spec.priority")
                                                .contains("also that of AdminNetworkPolicy deny-all")
                                                .contains("allow-80 is evaluated first"))))),
                c(
                        "AdminNetworkPolicy, NetworkPolicy and BaselineAdminNetworkPolicy together",
                        step(put(banp("""
                    metadata: {name: default}
                    spec:
                      subject: {namespaces: {}}
                      ingress: [{name: deny-all, action: Deny, from: [{namespaces: {}}]}]
                    """)), probe(TCP, 80, r -> r.peers(houses(), houses(), false))),
                        step(
                                putNp("ravenclaw", """
                    metadata: {name: from-gryffindor}
                    spec:
                      podSelector: {}
                      ingress: [{from: [{namespaceSelector: %s}]}]
                    """.formatted(GRYFFINDOR)),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(hosts(), ns("ravenclaw"), false)
                                                .peers(ns("gryffindor"), ns("ravenclaw"), true)
                                                .sameNodeHostsAllowed())),
                        step(
                                put(anp("""
                    metadata: {name: ravenclaw-guard}
                    spec:
                      priority: 1
                      subject: {namespaces: %s}
                      ingress:
                      - {action: Pass, from: [{namespaces: %s}]}
                      - {action: Deny, from: [{namespaces: %s}]}
                    """.formatted(RAVENCLAW, SLYTHERIN, GRYFFINDOR))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(hosts(), ns("ravenclaw"), false)
                                                .sameNodeHostsAllowed())),
                        step(
                                put(banp("""
                    metadata: {name: default}
                    spec:
                      subject: {namespaces: {}}
                      ingress:
                      - {name: allow-slytherin, action: Allow, from: [{namespaces: %s}]}
                      - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
                    """.formatted(SLYTHERIN)), anp("""
                    metadata: {name: hufflepuff-pass}
                    spec:
                      priority: 2
                      subject: {namespaces: %s}
                      ingress: [{action: Pass, from: [{namespaces: %s}]}]
                    """.formatted(HUFFLEPUFF, SLYTHERIN))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(hosts(), ns("ravenclaw"), false)
                                                .sameNodeHostsAllowed()
                                                .peers(
                                                        ns("slytherin"),
                                                        houses().and(ns("ravenclaw")
                                                                .negate()),
                                                        true)),
                                explain(
                                        "slytherin/draco-malfoy-0",
                                        "hufflepuff/cedric-diggory-1",
                                        TCP,
                                        80,
                                        "passed by admin/hufflepuff-pass"
                                                + " ingress[0] → allowed by baseline/default ingress[0] (allow-slytherin)"),
                                explain(
                                        "slytherin/draco-malfoy-0",
                                        "ravenclaw/luna-lovegood-1",
                                        TCP,
                                        80,
                                        "passed by admin/ravenclaw-guard"
                                                + " ingress[0] → no rule matched: denied by the default of tier default"))),
                c(
                        "inline CIDR peers (networks) match pods and nodes alike",
                        step(
                                put(anp("""
                    metadata: {name: cidr}
                    spec:
                      priority: 40
                      subject: {namespaces: %s}
                      egress:
                      - {action: Allow, to: [{namespaces: %s}]}
                      - {action: Deny, to: [{networks: [10.1.0.0/16]}]}
                    """.formatted(GRYFFINDOR, RAVENCLAW))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("gryffindor"), houses(), false)
                                                .peers(ns("gryffindor"), ns("ravenclaw"), true))),
                        step(
                                put(anp("""
                    metadata: {name: cidr}
                    spec:
                      priority: 40
                      subject: {namespaces: %s}
                      egress:
                      - {action: Allow, to: [{namespaces: %s}]}
                      - {action: Deny, to: [{networks: [10.1.0.0/16, 192.168.0.1/32]}]}
                    """.formatted(GRYFFINDOR, RAVENCLAW))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("gryffindor"), houses(), false)
                                                .peers(ns("gryffindor"), ns("ravenclaw"), true)
                                                .peers(ns("gryffindor"), is("forbidden-forest/centaur-0"), false))),
                        step(
                                put(banp("""
                    metadata: {name: default}
                    spec:
                      subject: {namespaces: %s}
                      egress: [{action: Deny, to: [{networks: [192.168.0.0/24]}]}]
                    """.formatted(SLYTHERIN))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("gryffindor"), houses(), false)
                                                .peers(ns("gryffindor"), ns("ravenclaw"), true)
                                                .peers(ns("gryffindor"), is("forbidden-forest/centaur-0"), false)
                                                .peers(ns("slytherin"), hosts(), false)))),
                c(
                        "named ports resolve on the destination pod, ingress and egress",
                        step(
                                put(anp("""
                    metadata: {name: named}
                    spec:
                      priority: 50
                      subject: {namespaces: %s}
                      ingress: [{action: Deny, from: [{namespaces: {}}], ports: [{namedPort: web}]}]
                      egress: [{action: Deny, to: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {replica: "1"}}}}], ports: [{namedPort: dns}]}]
                    """.formatted(RAVENCLAW))),
                                probe(TCP, 80, r -> r.peers(houses(), ns("ravenclaw"), false)),
                                probe(TCP, 8080, r -> {}),
                                probe(UDP, 53, r -> r.peers(ns("ravenclaw"), houses().and(replica("1")), false)),
                                probe(UDP, 5353, r -> {}))),
                c(
                        "node peers match the nodes' addresses and follow Node changes",
                        step(
                                put(anp("""
                    metadata: {name: no-control-plane}
                    spec:
                      priority: 60
                      subject: {namespaces: %s}
                      egress: [{action: Deny, to: [{nodes: {matchLabels: {role: control-plane}}}]}]
                    """.formatted(GRYFFINDOR))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("gryffindor"), is("forbidden-forest/centaur-1"), false))),
                        step(
                                w -> w.putNode(HouseWorld.node(0, Map.of("role", "control-plane"))),
                                probe(TCP, 80, r -> r.peers(ns("gryffindor"), hosts(), false))),
                        step(
                                w -> w.deleteNode("node-2"),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("gryffindor"), is("forbidden-forest/centaur-0"), false)))),
                c(
                        "ClusterNetworkPolicy admin and baseline tiers: Accept, Deny, baseline Pass, protocols",
                        step(
                                put(cnp("""
                    metadata: {name: admin-ravenclaw}
                    spec:
                      tier: Admin
                      priority: 10
                      subject: {namespaces: %s}
                      ingress:
                      - {name: accept-web, action: Accept, from: [{namespaces: %s}], protocols: [{tcp: {destinationPort: {number: 80}}}]}
                      - {name: deny-rest, action: Deny, from: [{namespaces: %s}]}
                    """.formatted(RAVENCLAW, SLYTHERIN, SLYTHERIN)), cnp("""
                    metadata: {name: baseline}
                    spec:
                      tier: Baseline
                      priority: 5
                      subject: {namespaces: {}}
                      ingress:
                      - {name: gryffindor-passes, action: Pass, from: [{namespaces: %s}]}
                      - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
                    """.formatted(
                                                GRYFFINDOR))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("gryffindor"), houses(), true)
                                                .peers(ns("slytherin"), ns("ravenclaw"), true)),
                                probe(
                                        TCP,
                                        8080,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("gryffindor"), houses(), true)
                                                .peers(ns("slytherin"), ns("ravenclaw"), false)),
                                explain(
                                        "gryffindor/harry-potter-0",
                                        "hufflepuff/cedric-diggory-0",
                                        TCP,
                                        80,
                                        "passed by baseline/cnp:baseline ingress[0] (gryffindor-passes) → every tier passed")),
                        step(
                                put(cnp("""
                    metadata: {name: admin-ravenclaw}
                    spec:
                      tier: Admin
                      priority: 10
                      subject: {namespaces: %s}
                      ingress:
                      - {action: Accept, from: [{namespaces: %s}], protocols: [{udp: {destinationPort: {range: {start: 5000, end: 6000}}}}, {destinationNamedPort: sctp-b}]}
                      - {action: Deny, from: [{namespaces: %s}]}
                    """.formatted(RAVENCLAW, SLYTHERIN, SLYTHERIN))),
                                probe(
                                        UDP,
                                        5353,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("gryffindor"), houses(), true)
                                                .peers(ns("slytherin"), ns("ravenclaw"), true)),
                                probe(
                                        SCTP,
                                        9005,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("gryffindor"), houses(), true)
                                                .peers(ns("slytherin"), ns("ravenclaw"), true)),
                                probe(
                                        SCTP,
                                        9003,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("gryffindor"), houses(), true)))),
                c(
                        "both API versions in one admin tier, ordered by priority",
                        step(
                                put(anp("""
                    metadata: {name: v1-deny}
                    spec:
                      priority: 20
                      subject: {namespaces: %s}
                      ingress: [{action: Deny, from: [{namespaces: %s}]}]
                    """.formatted(RAVENCLAW, SLYTHERIN)), cnp("""
                    metadata: {name: v2-pass}
                    spec:
                      tier: Admin
                      priority: 10
                      subject: {namespaces: %s}
                      ingress: [{action: Pass, from: [{namespaces: %s}]}]
                    """.formatted(RAVENCLAW, SLYTHERIN))),
                                probe(TCP, 80, r -> {})),
                        step(
                                put(cnp("""
                    metadata: {name: v2-pass}
                    spec:
                      tier: Admin
                      priority: 30
                      subject: {namespaces: %s}
                      ingress: [{action: Pass, from: [{namespaces: %s}]}]
                    """.formatted(RAVENCLAW, SLYTHERIN))),
                                probe(TCP, 80, r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)))),
                c(
                        "admin rules do not isolate; hostNetwork pods are never subjects or pod peers",
                        step(put(anp("""
                    metadata: {name: allow-only}
                    spec:
                      priority: 1
                      subject: {namespaces: {}}
                      ingress: [{action: Allow, from: [{namespaces: %s}]}]
                    """.formatted(SLYTHERIN))), probe(TCP, 80, r -> {})),
                        step(
                                put(anp("""
                    metadata: {name: deny-pods}
                    spec:
                      priority: 2
                      subject: {namespaces: {}}
                      ingress: [{action: Deny, from: [{namespaces: {}}]}]
                    """)),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("slytherin"), houses(), true))),
                        step(
                                put(anp("""
                    metadata: {name: deny-nodes}
                    spec:
                      priority: 3
                      subject: {namespaces: {}}
                      egress: [{action: Deny, to: [{networks: [192.168.0.0/16]}]}]
                    """)),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(houses(), houses(), false)
                                                .peers(ns("slytherin"), houses(), true)
                                                .peers(houses(), hosts(), false)))),
                c(
                        "invalid objects fail closed: Allow matches nothing, Deny and Pass deny all",
                        step(
                                put(anp("""
                    metadata: {name: broken-allow}
                    spec:
                      priority: 1
                      subject: {namespaces: %s}
                      ingress:
                      - {action: Allow, from: [{}]}
                      - {action: Deny, from: [{namespaces: %s}]}
                    """.formatted(RAVENCLAW, SLYTHERIN))),
                                probe(TCP, 80, r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)),
                                problems(p -> assertThat(p)
                                        .anySatisfy(x -> assertThat(x.toString())
                                                .startsWith(
                                                        "AdminNetworkPolicy broken-allow: spec.ingress[0].from[0]: sets none of")
                                                .endsWith("; the rule matches no traffic")))),
                        step(
                                put(anp("""
                    metadata: {name: broken-pass}
                    spec:
                      priority: 2
                      subject: {namespaces: %s}
                      egress: [{action: Pass, to: [{networks: [not-a-cidr]}]}]
                    """.formatted(HUFFLEPUFF))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)
                                                .peers(ns("hufflepuff"), any(), false)),
                                problems(p -> assertThat(p)
                                        .anySatisfy(x -> assertThat(x.toString())
                                                .contains("spec.egress[0].to[0].networks[0]: invalid CIDR")
                                                .endsWith("the rule denies all traffic")))),
                        step(
                                put(anp("""
                    metadata: {name: broken-subject}
                    spec:
                      priority: 3
                      subject: {namespaces: %s, pods: {podSelector: {}}}
                      ingress: [{action: Allow, from: [{namespaces: {}}]}]
                      egress: [{action: Deny, to: [{namespaces: %s}]}]
                    """.formatted(GRYFFINDOR, GRYFFINDOR))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)
                                                .peers(ns("hufflepuff"), any(), false)
                                                .peers(houses(), ns("gryffindor"), false))),
                        step(
                                put(banp("""
                    metadata: {name: not-default}
                    spec:
                      subject: {namespaces: {}}
                      ingress: [{action: Allow, from: [{namespaces: {}}]}]
                    """)),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)
                                                .peers(ns("hufflepuff"), any(), false)
                                                .peers(houses(), ns("gryffindor"), false)),
                                problems(
                                        p -> assertThat(p)
                                                .extracting(PolicyProblem::toString)
                                                .anySatisfy(
                                                        x -> assertThat(x)
                                                                .startsWith(
                                                                        "BaselineAdminNetworkPolicy not-default: metadata.name"))
                                                .anySatisfy(
                                                        x -> assertThat(x)
                                                                .startsWith(
                                                                        "AdminNetworkPolicy broken-subject: spec.subject: sets both")))),
                        step(
                                put(cnp("""
                    metadata: {name: out-of-range}
                    spec:
                      tier: Admin
                      priority: 5000
                      subject: {namespaces: %s}
                      ingress: [{action: Deny, from: [{namespaces: %s}], protocols: [{tcp: {destinationPort: {number: 80}}}]}]
                    """.formatted(SLYTHERIN, RAVENCLAW))),
                                probe(
                                        TCP,
                                        80,
                                        r -> r.peers(ns("slytherin"), ns("ravenclaw"), false)
                                                .peers(ns("hufflepuff"), any(), false)
                                                .peers(houses(), ns("gryffindor"), false)
                                                .peers(ns("ravenclaw"), ns("slytherin"), false)),
                                problems(
                                        p -> assertThat(p)
                                                .extracting(PolicyProblem::toString)
                                                .anySatisfy(
                                                        x -> assertThat(x)
                                                                .isEqualTo(
                                                                        "ClusterNetworkPolicy out-of-range: spec.priority: priority 5000 outside 0-1000; evaluated at 1000"))))));
    }

    // ---- the runner ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void conformanceCase(Case c) {
        World w = new World();
        int stepNo = 0;
        for (Step s : c.steps()) {
            stepNo++;
            s.change().accept(w);
            OfflineCluster cluster = new OfflineCluster(w.calc, w.pods.values(), w.nodes.values());
            for (Check check : s.checks()) {
                check.verify(cluster, w, stepNo);
            }
            w.assertSameAsFromScratch();
        }
    }

    // ---- DSL ----

    interface Check {
        void verify(OfflineCluster cluster, World w, int step);
    }

    record Probe(Protocol protocol, int port, Consumer<Reach> expect) implements Check {
        @Override
        public void verify(OfflineCluster cluster, World w, int step) {
            Reach expected = new Reach();
            expect.accept(expected);
            ConnectivityMatrix m = ConnectivityMatrix.of(cluster, protocol, port);
            assertThat(Reach.of(m).table(this))
                    .as("step %d, %s/%d: observed (left) vs expected", step, protocol, port)
                    .isEqualTo(expected.table(this));
        }
    }

    record Explain(String from, String to, Protocol protocol, int port, String reason) implements Check {
        @Override
        public void verify(OfflineCluster cluster, World w, int step) {
            String src = cluster.member(from).orElseThrow().ips().get(0);
            String dst = cluster.member(to).orElseThrow().ips().get(0);
            var e = cluster.explain(src, dst, protocol.getNumber(), port);
            assertThat(e.getIngress().getReason())
                    .as("step %d: explain %s -> %s", step, from, to)
                    .isEqualTo(reason);
        }
    }

    record Problems(Consumer<List<PolicyProblem>> expect) implements Check {
        @Override
        public void verify(OfflineCluster cluster, World w, int step) {
            expect.accept(w.calc.problems());
        }
    }

    record Step(Consumer<World> change, List<Check> checks) {}

    record Case(String name, List<Step> steps) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case c(String name, Step... steps) {
        return new Case(name, List.of(steps));
    }

    static Step step(Consumer<World> change, Check... checks) {
        return new Step(change, List.of(checks));
    }

    static Probe probe(Protocol proto, int port, Consumer<Reach> expect) {
        return new Probe(proto, port, expect);
    }

    static Explain explain(String from, String to, Protocol proto, int port, String ingressReason) {
        return new Explain(from, to, proto, port, ingressReason);
    }

    static Problems problems(Consumer<List<PolicyProblem>> expect) {
        return new Problems(expect);
    }

    static Consumer<World> put(GenericKubernetesResource... policies) {
        return w -> {
            for (GenericKubernetesResource p : policies) {
                w.putAdmin(p);
            }
        };
    }

    static Consumer<World> putNp(String ns, String yaml) {
        return w -> w.putNp(Objects.policy(ns, yaml));
    }

    static Predicate<String> any() {
        return p -> true;
    }

    static Predicate<String> ns(String ns) {
        return p -> p.startsWith(ns + "/");
    }

    static Predicate<String> is(String pod) {
        return pod::equals;
    }

    static Predicate<String> hosts() {
        return HouseWorld.HOST_PODS::contains;
    }

    static Predicate<String> houses() {
        return hosts().negate();
    }

    static Predicate<String> replica(String r) {
        return p -> p.endsWith("-" + r) && !hosts().test(p);
    }

    /** Expected connectivity: everything allowed unless said otherwise; loopback always allowed. */
    static final class Reach {
        static final List<String> MEMBERS = HouseWorld.members();
        final Map<String, Map<String, Boolean>> m = new LinkedHashMap<>();

        Reach() {
            for (String f : MEMBERS) {
                Map<String, Boolean> row = new LinkedHashMap<>();
                MEMBERS.forEach(t -> row.put(t, true));
                m.put(f, row);
            }
        }

        static Reach of(ConnectivityMatrix cm) {
            Reach r = new Reach();
            assertThat(cm.pods()).containsExactlyElementsOf(MEMBERS);
            assertThat(cm.hostNetwork()).containsExactlyElementsOf(HouseWorld.HOST_PODS);
            for (String f : MEMBERS) {
                for (String t : MEMBERS) {
                    r.m.get(f).put(t, cm.allowed(f, t));
                }
            }
            return r;
        }

        Reach set(String from, String to, boolean v) {
            m.get(from).put(to, v);
            return this;
        }

        Reach peers(Predicate<String> from, Predicate<String> to, boolean v) {
            for (String f : MEMBERS) {
                for (String t : MEMBERS) {
                    if (from.test(f) && to.test(t)) {
                        set(f, t, v);
                    }
                }
            }
            return this;
        }

        /** A node's connections to its own pods are never policed: centaur-0 reaches replica 0, centaur-1 replica 1. */
        Reach sameNodeHostsAllowed() {
            return peers(is(HouseWorld.HOST_PODS.get(0)), replica("0"), true)
                    .peers(is(HouseWorld.HOST_PODS.get(1)), replica("1"), true);
        }

        String table(Probe p) {
            StringBuilder sb = new StringBuilder(p.protocol() + "/" + p.port() + "\n");
            for (String f : MEMBERS) {
                sb.append(String.format("%-32s", f));
                for (String t : MEMBERS) {
                    boolean v = f.equals(t) || m.get(f).get(t);
                    sb.append(v ? " ." : " X");
                }
                sb.append('\n');
            }
            return sb.toString();
        }
    }

    /** The cluster objects of a case and the incremental calculator fed with every change. */
    static final class World {
        final Map<String, Namespace> namespaces = new LinkedHashMap<>();
        final Map<String, Pod> pods = new LinkedHashMap<>();
        final Map<String, Node> nodes = new LinkedHashMap<>();
        final Map<String, NetworkPolicy> policies = new LinkedHashMap<>();
        final Map<String, GenericKubernetesResource> adminPolicies = new LinkedHashMap<>();
        final IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();

        World() {
            HouseWorld.nodes().forEach(this::putNode);
            HouseWorld.namespaces().forEach(n -> {
                namespaces.put(n.getMetadata().getName(), n);
                calc.upsertNamespace(n);
            });
            HouseWorld.pods().forEach(p -> {
                pods.put(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), p);
                calc.upsertPod(p);
            });
        }

        void putNode(Node n) {
            nodes.put(n.getMetadata().getName(), n);
            calc.upsertNode(n);
        }

        void deleteNode(String name) {
            nodes.remove(name);
            calc.deleteNode(name);
        }

        void putNp(NetworkPolicy np) {
            policies.put(
                    np.getMetadata().getNamespace() + "/" + np.getMetadata().getName(), np);
            calc.upsertPolicy(np);
        }

        void putAdmin(GenericKubernetesResource p) {
            adminPolicies.put(p.getKind() + "/" + p.getMetadata().getName(), p);
            calc.upsertAdminPolicy(p);
        }

        void deleteAdmin(AdminPolicyKind kind, String name) {
            adminPolicies.remove(kind.kind() + "/" + name);
            calc.deleteAdminPolicy(kind, name);
        }

        void assertSameAsFromScratch() {
            IncrementalPolicyCalculator fresh = new ClusterObjects(
                            new ArrayList<>(namespaces.values()),
                            new ArrayList<>(pods.values()),
                            new ArrayList<>(policies.values()),
                            new ArrayList<>(adminPolicies.values()),
                            new ArrayList<>(nodes.values()))
                    .feed(new IncrementalPolicyCalculator());
            assertThat(calc.nodes()).isEqualTo(fresh.nodes());
            for (String node : fresh.nodes()) {
                assertThat(calc.snapshot(node)).as("node %s", node).isEqualTo(fresh.snapshot(node));
            }
            assertThat(calc.problems()).isEqualTo(fresh.problems());
        }
    }
}
