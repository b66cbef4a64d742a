// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointRemove;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.util.List;

/** Builders for the ToAgent messages tests script. */
public final class Messages {
    private Messages() {}

    public static ToAgent ipSet(long seq, String id, String... members) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setIpSetUpdate(
                        IpSetUpdate.newBuilder().setId(id).setType(IpSetType.IP).addAllMembers(List.of(members)))
                .build();
    }

    /** A NetworkPolicy-tier policy "ns/name" allowing ingress from the members of ipSetId. */
    public static ToAgent allowIngressFrom(long seq, String name, String ipSetId) {
        Policy policy = Policy.newBuilder()
                .addInboundRules(Rule.newBuilder()
                        .setAction(Action.ALLOW)
                        .addPeers(io.kubeverdict.proto.v1.Peer.newBuilder().setIpSetId(ipSetId))
                        .setRuleId("ingress[0]"))
                .build();
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(
                        ActivePolicyUpdate.newBuilder().setId(policyId(name)).setPolicy(policy))
                .build();
    }

    public static PolicyId policyId(String name) {
        return PolicyId.newBuilder().setTier("default").setName(name).build();
    }

    /** A local endpoint; with policies named, selected by them for ingress. */
    public static ToAgent endpoint(long seq, String ns, String pod, String ip, String... ingressPolicies) {
        WorkloadEndpoint.Builder ep = WorkloadEndpoint.newBuilder().addIps(ip).putLabels("pod", pod);
        if (ingressPolicies.length > 0) {
            ep.addTiers(TierInfo.newBuilder()
                    .setName("default")
                    .setDefaultAction(Action.DENY)
                    .addAllIngressPolicies(List.of(ingressPolicies)));
        }
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace(ns).setPod(pod))
                        .setEndpoint(ep))
                .build();
    }

    /** A policy built with the proto test vocabulary (Snapshots), as an update. */
    public static ToAgent policyUpdate(long seq, io.kubeverdict.proto.v1.ActivePolicy policy) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(
                        ActivePolicyUpdate.newBuilder().setId(policy.getId()).setPolicy(policy.getPolicy()))
                .build();
    }

    /** An endpoint built with the proto test vocabulary (Snapshots), as an update. */
    public static ToAgent endpointUpdate(long seq, io.kubeverdict.proto.v1.Endpoint endpoint) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(endpoint.getId())
                        .setEndpoint(endpoint.getEndpoint()))
                .build();
    }

    public static ToAgent removeEndpoint(long seq, String ns, String pod) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setWorkloadEndpointRemove(WorkloadEndpointRemove.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace(ns).setPod(pod)))
                .build();
    }

    /** InSync as a control plane without change boundaries sends it (before they existed). */
    public static ToAgent inSync(long seq) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setInSync(InSync.getDefaultInstance())
                .build();
    }

    /**
     * InSync as a control plane that ends every change with one sends it: the first one announces
     * the boundaries, each later one ends a change.
     */
    public static ToAgent boundary(long seq) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setInSync(InSync.newBuilder().setChangeBoundaries(true))
                .build();
    }

    /** A delta adding members to a set the agent has. */
    public static ToAgent addMembers(long seq, String id, String... members) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setIpSetDeltaUpdate(io.kubeverdict.proto.v1.IpSetDeltaUpdate.newBuilder()
                        .setId(id)
                        .addAllAddedMembers(List.of(members)))
                .build();
    }
}
