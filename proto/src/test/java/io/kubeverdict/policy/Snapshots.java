// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A terse vocabulary for building snapshots in tests, the one every module's tests use (the proto
 * module publishes it in its test jar).
 */
public final class Snapshots {
    private Snapshots() {}

    public static final int TCP = Protocol.TCP_VALUE;
    public static final int UDP = Protocol.UDP_VALUE;
    public static final int SCTP = Protocol.SCTP_VALUE;
    public static final int ICMP = Protocol.ICMP_VALUE;
    public static final int ICMPV6 = Protocol.ICMPV6_VALUE;

    public static IpSet ipSet(String id, String... members) {
        return IpSet.newBuilder()
                .setId(id)
                .setType(IpSetType.IP)
                .addAllMembers(List.of(members))
                .build();
    }

    public static IpSet namedSet(String id, String... members) {
        return IpSet.newBuilder()
                .setId(id)
                .setType(IpSetType.IP_AND_PORT)
                .addAllMembers(List.of(members))
                .build();
    }

    public static Peer set(String id) {
        return Peer.newBuilder().setIpSetId(id).build();
    }

    public static Peer block(String cidr, String... except) {
        return Peer.newBuilder()
                .setIpBlock(IpBlock.newBuilder().setCidr(cidr).addAllExcept(List.of(except)))
                .build();
    }

    /** A domainNames peer's patterns (canonical) and the learned set they fill. */
    public static DomainNames domainNames(String learnedSetId, String... patterns) {
        return DomainNames.newBuilder()
                .setLearnedSetId(learnedSetId)
                .addAllPatterns(List.of(patterns))
                .build();
    }

    public static Peer domains(DomainNames names) {
        return Peer.newBuilder().setDomainNames(names).build();
    }

    public static PortMatch port(Protocol protocol, int port) {
        return PortMatch.newBuilder().setProtocol(protocol).setPort(port).build();
    }

    public static PortMatch range(Protocol protocol, int port, int endPort) {
        return PortMatch.newBuilder()
                .setProtocol(protocol)
                .setPort(port)
                .setEndPort(endPort)
                .build();
    }

    public static PortMatch named(String setId) {
        return PortMatch.newBuilder()
                .setProtocol(Protocol.TCP)
                .setNamedPortIpSetId(setId)
                .build();
    }

    /** A rule with the given peers (none: all peers) and ports. */
    public static Rule rule(Action action, String id, List<Peer> peers, List<PortMatch> ports) {
        return Rule.newBuilder()
                .setAction(action)
                .setRuleId(id)
                .setAllPeers(peers.isEmpty())
                .addAllPeers(peers)
                .addAllPorts(ports)
                .build();
    }

    public static Rule allow(String id, List<Peer> peers, List<PortMatch> ports) {
        return rule(Action.ALLOW, id, peers, ports);
    }

    /** A rule whose peers all resolved to nothing: all_peers false, no peers. */
    public static Rule allowNobody(String id) {
        return Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId(id)
                .setAllPeers(false)
                .build();
    }

    public static ActivePolicy policy(String tier, String name, List<Rule> inbound, List<Rule> outbound) {
        return ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                .setPolicy(Policy.newBuilder().addAllInboundRules(inbound).addAllOutboundRules(outbound))
                .build();
    }

    public static TierInfo tier(String name, Action defaultAction, List<String> ingress, List<String> egress) {
        return TierInfo.newBuilder()
                .setName(name)
                .setDefaultAction(defaultAction)
                .addAllIngressPolicies(ingress)
                .addAllEgressPolicies(egress)
                .build();
    }

    /** The NetworkPolicy tier: "default", default DENY. */
    public static TierInfo np(List<String> ingress, List<String> egress) {
        return tier("default", Action.DENY, ingress, egress);
    }

    public static Endpoint endpoint(String namespacedName, List<String> ips, TierInfo... tiers) {
        String[] parts = namespacedName.split("/");
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(parts[0]).setPod(parts[1]))
                .setEndpoint(WorkloadEndpoint.newBuilder().addAllIps(ips).addAllTiers(List.of(tiers)))
                .build();
    }

    public static Tuple tuple(String src, String dst, int protocol, int port) {
        return Tuple.newBuilder()
                .setSrcIp(src)
                .setDstIp(dst)
                .setProtocol(protocol)
                .setDstPort(port)
                .build();
    }

    public static PacketTuple packet(String src, String dst, int protocol, int port) {
        return PacketTuple.of(tuple(src, dst, protocol, port));
    }

    /**
     * A NetworkPolicy-tier policy "NS/NAME" whose one ingress rule allows the members of the sets
     * (no sets: nobody).
     */
    public static ActivePolicy allowIngressFrom(String name, String... sets) {
        List<Peer> peers = Arrays.stream(sets).map(Snapshots::set).toList();
        Rule rule = peers.isEmpty() ? allowNobody("ingress[0]") : allow("ingress[0]", peers, List.of());
        return policy("default", name, List.of(rule), List.of());
    }

    /** A pod "NS/POD" with one IP and label app=POD, isolated for ingress by the given policies (if any). */
    public static Endpoint podEndpoint(String ns, String pod, String ip, String... ingressPolicies) {
        Endpoint e = endpoint(ns + "/" + pod, List.of(ip), np(List.of(ingressPolicies), List.of()));
        return e.toBuilder()
                .setEndpoint(e.getEndpoint().toBuilder().putAllLabels(Map.of("app", pod)))
                .build();
    }

    public static NodeSnapshot snapshot(
            String node, List<IpSet> sets, List<ActivePolicy> policies, List<Endpoint> endpoints) {
        return NodeSnapshot.newBuilder()
                .setNode(node)
                .addAllIpSets(sets)
                .addAllPolicies(policies)
                .addAllEndpoints(endpoints)
                .build();
    }
}
