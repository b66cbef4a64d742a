package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpBlock;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.List;

/** A terse vocabulary for building snapshots in tests. */
final class Snapshots {
    private Snapshots() {}

    static final int TCP = Protocol.TCP_VALUE;
    static final int UDP = Protocol.UDP_VALUE;
    static final int SCTP = Protocol.SCTP_VALUE;
    static final int ICMP = Protocol.ICMP_VALUE;
    static final int ICMPV6 = Protocol.ICMPV6_VALUE;

    static IpSet ipSet(String id, String... members) {
        return IpSet.newBuilder().setId(id).setType(IpSetType.IP).addAllMembers(List.of(members)).build();
    }

    static IpSet namedSet(String id, String... members) {
        return IpSet.newBuilder().setId(id).setType(IpSetType.IP_AND_PORT).addAllMembers(List.of(members)).build();
    }

    static Peer set(String id) {
        return Peer.newBuilder().setIpSetId(id).build();
    }

    static Peer block(String cidr, String... except) {
        return Peer.newBuilder().setIpBlock(IpBlock.newBuilder().setCidr(cidr).addAllExcept(List.of(except))).build();
    }

    static PortMatch port(Protocol protocol, int port) {
        return PortMatch.newBuilder().setProtocol(protocol).setPort(port).build();
    }

    static PortMatch range(Protocol protocol, int port, int endPort) {
        return PortMatch.newBuilder().setProtocol(protocol).setPort(port).setEndPort(endPort).build();
    }

    static PortMatch named(String setId) {
        return PortMatch.newBuilder().setProtocol(Protocol.TCP).setNamedPortIpSetId(setId).build();
    }

    /** A rule with the given peers (none: all peers) and ports. */
    static Rule rule(Action action, String id, List<Peer> peers, List<PortMatch> ports) {
        return Rule.newBuilder().setAction(action).setRuleId(id).setAllPeers(peers.isEmpty())
                .addAllPeers(peers).addAllPorts(ports).build();
    }

    static Rule allow(String id, List<Peer> peers, List<PortMatch> ports) {
        return rule(Action.ALLOW, id, peers, ports);
    }

    /** A rule whose peers all resolved to nothing: all_peers false, no peers. */
    static Rule allowNobody(String id) {
        return Rule.newBuilder().setAction(Action.ALLOW).setRuleId(id).setAllPeers(false).build();
    }

    static ActivePolicy policy(String tier, String name, List<Rule> inbound, List<Rule> outbound) {
        return ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                .setPolicy(Policy.newBuilder().addAllInboundRules(inbound).addAllOutboundRules(outbound))
                .build();
    }

    static TierInfo tier(String name, Action defaultAction, List<String> ingress, List<String> egress) {
        return TierInfo.newBuilder().setName(name).setDefaultAction(defaultAction)
                .addAllIngressPolicies(ingress).addAllEgressPolicies(egress).build();
    }

    /** The NetworkPolicy tier: "default", default DENY. */
    static TierInfo np(List<String> ingress, List<String> egress) {
        return tier("default", Action.DENY, ingress, egress);
    }

    static Endpoint endpoint(String namespacedName, List<String> ips, TierInfo... tiers) {
        String[] parts = namespacedName.split("/");
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace(parts[0]).setPod(parts[1]))
                .setEndpoint(WorkloadEndpoint.newBuilder().addAllIps(ips).addAllTiers(List.of(tiers)))
                .build();
    }

    static Tuple tuple(String src, String dst, int protocol, int port) {
        return Tuple.newBuilder().setSrcIp(src).setDstIp(dst).setProtocol(protocol).setDstPort(port).build();
    }

    static PacketTuple packet(String src, String dst, int protocol, int port) {
        return PacketTuple.of(tuple(src, dst, protocol, port));
    }
}
