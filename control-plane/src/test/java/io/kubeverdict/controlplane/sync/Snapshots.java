package io.kubeverdict.controlplane.sync;

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
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.List;
import java.util.Map;

/** Small hand-made snapshots for the sync tests. */
final class Snapshots {
    private Snapshots() {}

    static IpSet set(String id, String... members) {
        return IpSet.newBuilder().setId(id).setType(IpSetType.IP).addAllMembers(List.of(members)).build();
    }

    static PolicyId policyId(String name) {
        return PolicyId.newBuilder().setTier("default").setName(name).build();
    }

    /** A policy allowing ingress from the members of the given sets. */
    static ActivePolicy policy(String name, String... sets) {
        Rule.Builder r = Rule.newBuilder().setAction(Action.ALLOW).setRuleId("ingress[0]");
        for (String s : sets) {
            r.addPeers(Peer.newBuilder().setIpSetId(s));
        }
        return ActivePolicy.newBuilder().setId(policyId(name))
                .setPolicy(Policy.newBuilder().addInboundRules(r)).build();
    }

    /** An endpoint "ns/pod" with one IP, isolated for ingress by the given policies. */
    static Endpoint endpoint(String ns, String pod, String ip, String... policies) {
        TierInfo.Builder t = TierInfo.newBuilder().setName("default").setDefaultAction(Action.DENY);
        for (String p : policies) {
            t.addIngressPolicies(p);
        }
        return Endpoint.newBuilder().setId(EndpointId.newBuilder().setNamespace(ns).setPod(pod))
                .setEndpoint(WorkloadEndpoint.newBuilder().addIps(ip).addTiers(t)
                        .putAllLabels(Map.of("app", pod)))
                .build();
    }

    static NodeSnapshot snapshot(String node, List<IpSet> sets, List<ActivePolicy> policies, List<Endpoint> eps) {
        return NodeSnapshot.newBuilder().setNode(node).addAllIpSets(sets).addAllPolicies(policies)
                .addAllEndpoints(eps).build();
    }
}
