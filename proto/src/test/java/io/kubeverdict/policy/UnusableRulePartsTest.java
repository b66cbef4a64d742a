// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.ICMP;
import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.domainNames;
import static io.kubeverdict.policy.Snapshots.domains;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.port;
import static io.kubeverdict.policy.Snapshots.range;
import static io.kubeverdict.policy.Snapshots.rule;
import static io.kubeverdict.policy.Snapshots.set;
import static io.kubeverdict.policy.Snapshots.tier;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Audit finding M2: a part of a rule the agent cannot use (a set of an unknown type or missing, an
 * unknown peer kind, an invalid cidr/except or port clause, e.g. from a newer control plane) makes
 * a Deny or Pass rule deny every packet of its direction, and an Allow rule's part match nothing.
 * The subject pod 10.0.0.1 is not isolated by any NetworkPolicy, so "matches nothing" would allow.
 */
class UnusableRulePartsTest {

    private static final String POD = "10.0.0.1";
    /** A member of s:X, the set a newer control plane sent with a type this build does not know. */
    private static final String MEMBER = "10.9.0.1";

    private static final String STRANGER = "10.5.5.5";
    private static final IpSet UNKNOWN_TYPE =
            IpSet.newBuilder().setId("s:X").setTypeValue(99).addMembers(MEMBER).build();

    /** The pod with one admin-tier policy "p" (default PASS) in the rule's direction, and nothing else. */
    private static SnapshotIndex adminIndex(Rule rule, boolean inbound) {
        return SnapshotIndex.compile(NodeSnapshot.newBuilder()
                .addIpSets(UNKNOWN_TYPE)
                .addIpSets(ipSet("good", MEMBER))
                .addPolicies(
                        policy("admin", "p", inbound ? List.of(rule) : List.of(), inbound ? List.of() : List.of(rule)))
                .addEndpoints(endpoint(
                        "ns/a",
                        List.of(POD),
                        tier(
                                "admin",
                                Action.PASS,
                                inbound ? List.of("p") : List.of(),
                                inbound ? List.of() : List.of("p"))))
                .build());
    }

    private static SnapshotIndex ingressIndex(Rule rule) {
        return adminIndex(rule, true);
    }

    private static String ingress(SnapshotIndex index, String src, int protocol, int port) {
        return new DecisionText(index).describe(index.decide(packet(src, POD, protocol, port)));
    }

    private static String ingress(SnapshotIndex index, String src) {
        return ingress(index, src, TCP, 80);
    }

    private static Rule deny(Peer... peers) {
        return rule(Action.DENY, "ingress[0]", List.of(peers), List.of());
    }

    // ------------------------------------------------------------------ the audit's cases

    @Test
    void aDenyWhosePeerSetHasAnUnknownTypeDeniesAll() {
        SnapshotIndex index = ingressIndex(deny(set("s:X")));

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(index.problems())
                .anyMatch(p -> p.contains("admin/p rule ingress[0]")
                        && p.contains("s:X")
                        && p.contains("the rule denies all"));
    }

    @Test
    void aDenyWhoseExceptIsInvalidDeniesAll() {
        SnapshotIndex index = ingressIndex(deny(block("0.0.0.0/0", "10.0.0.0/33")));

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(index.problems()).anyMatch(p -> p.contains("10.0.0.0/33") && p.contains("the rule denies all"));
    }

    @Test
    void aDenyWhoseCidrIsInvalidDeniesAll() {
        SnapshotIndex index = ingressIndex(deny(block("10.9.0.0/99"), set("good")));

        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
    }

    @Test
    void aDenyWithAnInvalidPortClauseDeniesEveryPeerAndPort() {
        // Peers and the other clause are fine: the rule still denies beyond them, ICMP included.
        Rule rule = rule(
                Action.DENY,
                "ingress[0]",
                List.of(set("good")),
                List.of(port(Protocol.TCP, 443), range(Protocol.TCP, 90, 80)));
        SnapshotIndex index = ingressIndex(rule);

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(ingress(index, STRANGER, TCP, 8080)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(ingress(index, STRANGER, ICMP, 0)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(index.problems()).anyMatch(p -> p.contains("90-80") && p.contains("the rule denies all"));
    }

    @Test
    void aDenyWithAPortOfAnUnknownProtocolDeniesAll() {
        Rule rule = rule(
                Action.DENY,
                "ingress[0]",
                List.of(set("good")),
                List.of(PortMatch.newBuilder().setProtocolValue(250).setPort(80).build()));

        assertThat(ingress(ingressIndex(rule), STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
    }

    @Test
    void aDenyWithANamedPortSetOfUnknownTypeDeniesAll() {
        Rule rule = rule(
                Action.DENY,
                "ingress[0]",
                List.of(set("good")),
                List.of(PortMatch.newBuilder()
                        .setProtocol(Protocol.TCP)
                        .setNamedPortIpSetId("s:X")
                        .build()));

        assertThat(ingress(ingressIndex(rule), STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
    }

    @Test
    void aDenyWithAPeerOfAnUnknownKindDeniesAll() throws InvalidProtocolBufferException {
        // A newer control plane's peer kind: a oneof member this build does not know arrives as an unknown field.
        Peer newer = Peer.newBuilder()
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                9,
                                UnknownFieldSet.Field.newBuilder()
                                        .addLengthDelimited(ByteString.copyFromUtf8("x"))
                                        .build())
                        .build())
                .build();
        Rule received = Rule.parseFrom(deny(newer, set("good")).toByteArray());
        assertThat(received.getPeers(0).getKindCase()).isEqualTo(Peer.KindCase.KIND_NOT_SET);

        SnapshotIndex index = ingressIndex(received);

        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(index.problems())
                .anyMatch(p -> p.contains("peer of no known kind") && p.contains("the rule denies all"));
    }

    @Test
    void aDenyWhosePeerSetIsMissingDeniesAll() {
        SnapshotIndex index = ingressIndex(deny(set("not-sent-yet")));

        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
    }

    @Test
    void aDenyWithADomainNamePeerInAnInboundRuleDeniesAll() {
        SnapshotIndex index = ingressIndex(deny(domains(domainNames("d:1", "api.example.com"))));

        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
    }

    @Test
    void anUnusableOutboundDenyDeniesEgressOnly() {
        SnapshotIndex index = adminIndex(rule(Action.DENY, "egress[0]", List.of(set("s:X")), List.of()), false);

        assertThat(new DecisionText(index).describe(index.decide(packet(POD, STRANGER, TCP, 80))))
                .isEqualTo("DENY egress: denied by admin/p egress[0]");
        assertThat(Decision.allowed(index.decide(packet(STRANGER, POD, TCP, 80))))
                .isTrue();
    }

    // ------------------------------------------------------------------ Pass, baseline, Allow

    @Test
    void aPassWithAnUnusablePartDeniesAllInsteadOfFallingThroughToALaterAllow() {
        // Read as "matches nothing", s:X's members would reach allow-all below and be allowed;
        // read as "matches everything", they would skip a later admin Deny. Deny all is neither.
        SnapshotIndex index = SnapshotIndex.compile(NodeSnapshot.newBuilder()
                .addIpSets(UNKNOWN_TYPE)
                .addPolicies(policy(
                        "admin",
                        "pass-x",
                        List.of(rule(Action.PASS, "ingress[0]", List.of(set("s:X")), List.of())),
                        List.of()))
                .addPolicies(
                        policy("admin", "allow-all", List.of(allow("ingress[0]", List.of(), List.of())), List.of()))
                .addPolicies(policy("default", "ns/isolate", List.of(), List.of()))
                .addEndpoints(endpoint(
                        "ns/a",
                        List.of(POD),
                        tier("admin", Action.PASS, List.of("pass-x", "allow-all"), List.of()),
                        np(List.of("ns/isolate"), List.of())))
                .build());

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by admin/pass-x ingress[0]");
        assertThat(ingress(index, STRANGER)).isEqualTo("DENY ingress: denied by admin/pass-x ingress[0]");
        assertThat(index.problems()).anyMatch(p -> p.contains("admin/pass-x") && p.contains("the rule denies all"));
    }

    @Test
    void aBaselineDenyWithAnUnusablePartDeniesAll() {
        SnapshotIndex index = SnapshotIndex.compile(NodeSnapshot.newBuilder()
                .addIpSets(UNKNOWN_TYPE)
                .addPolicies(policy("baseline", "default", List.of(deny(set("s:X"))), List.of()))
                .addEndpoints(
                        endpoint("ns/a", List.of(POD), tier("baseline", Action.ALLOW, List.of("default"), List.of())))
                .build());

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by baseline/default ingress[0]");
    }

    @Test
    void anAllowWithAnUnusablePartStillMatchesOnlyItsUsableParts() {
        Rule rule = allow(
                "ingress[0]",
                List.of(set("s:X"), set("good")),
                List.of(port(Protocol.TCP, 80), range(Protocol.TCP, 90, 80)));
        SnapshotIndex index = SnapshotIndex.compile(NodeSnapshot.newBuilder()
                .addIpSets(UNKNOWN_TYPE)
                .addIpSets(ipSet("good", "10.8.0.1"))
                .addPolicies(policy("default", "ns/p", List.of(rule), List.of()))
                .addEndpoints(endpoint("ns/a", List.of(POD), np(List.of("ns/p"), List.of())))
                .build());

        assertThat(ingress(index, "10.8.0.1")).isEqualTo("ALLOW ingress: allowed by default/ns/p ingress[0]");
        assertThat(ingress(index, MEMBER))
                .isEqualTo("DENY ingress: no rule matched: denied by the default of tier default");
        assertThat(ingress(index, "10.8.0.1", TCP, 85))
                .isEqualTo("DENY ingress: no rule matched: denied by the default of tier default");
        assertThat(index.problems())
                .filteredOn(p -> p.contains("rule ingress[0]"))
                .hasSize(2)
                .allMatch(p -> p.endsWith("; it matches nothing"));
    }

    @Test
    void aUsableDenyIsUnchanged() {
        SnapshotIndex index = ingressIndex(deny(set("good")));

        assertThat(ingress(index, MEMBER)).isEqualTo("DENY ingress: denied by admin/p ingress[0]");
        assertThat(ingress(index, STRANGER)).isEqualTo("ALLOW ingress: every tier passed");
        assertThat(index.problems())
                .containsExactly("ip set s:X has unknown type 99; it is left out (rules naming it cannot use it)");
    }
}
