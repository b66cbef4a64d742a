// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
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
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.List;

/** Small node snapshots built field by field for the re-judging's unit tests. */
final class TestSnapshots {
    private TestSnapshots() {}

    static NodeSnapshot.Builder node() {
        return NodeSnapshot.newBuilder().setNode("node-1");
    }

    static IpSet set(String id, String... members) {
        return IpSet.newBuilder()
                .setId(id)
                .setType(IpSetType.IP)
                .addAllMembers(List.of(members))
                .build();
    }

    /** A policy allowing ingress from the set's members on TCP ports. */
    static ActivePolicy allowFrom(String name, String setId, int... tcpPorts) {
        Rule.Builder rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .addPeers(Peer.newBuilder().setIpSetId(setId))
                .setRuleId("ingress[0]");
        for (int port : tcpPorts) {
            rule.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(port));
        }
        return ActivePolicy.newBuilder()
                .setId(PolicyId.newBuilder().setTier("default").setName(name))
                .setPolicy(Policy.newBuilder().addInboundRules(rule))
                .build();
    }

    /** An endpoint; with policy names, selected by them for ingress (tier default, default deny). */
    static Endpoint endpoint(String pod, List<String> ips, String... ingressPolicies) {
        WorkloadEndpoint.Builder ep = WorkloadEndpoint.newBuilder().addAllIps(ips);
        if (ingressPolicies.length > 0) {
            ep.addTiers(TierInfo.newBuilder()
                    .setName("default")
                    .setDefaultAction(Action.DENY)
                    .addAllIngressPolicies(List.of(ingressPolicies)));
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                .setEndpoint(ep)
                .build();
    }

    static Endpoint endpoint(String pod, String ip, String... ingressPolicies) {
        return endpoint(pod, List.of(ip), ingressPolicies);
    }
}
