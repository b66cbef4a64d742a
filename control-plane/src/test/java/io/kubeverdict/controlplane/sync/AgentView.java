// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

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
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Test-side agent model: applies ToAgent messages the way an agent must, and fails loudly when the
 * stream breaks the contract (a reference to something not yet sent, a removal of something still
 * referenced, a sequence gap, a delta for an unknown set).
 */
final class AgentView {
    final Map<String, IpSetType> setTypes = new HashMap<>();
    final Map<String, Set<String>> sets = new HashMap<>();
    final Map<PolicyId, Policy> policies = new HashMap<>();
    final Map<EndpointId, Endpoint> endpoints = new HashMap<>();
    /** The last NodeUpdate's pod ranges. */
    List<String> podCidrs = List.of();

    final List<ToAgent> received = new ArrayList<>();
    boolean inSync;
    long lastSequence;
    /** Messages received after InSync, without the InSyncs that end each change (see boundaries). */
    final List<ToAgent> deltas = new ArrayList<>();
    /** The InSyncs received after the first: each ends a change. */
    final List<ToAgent> boundaries = new ArrayList<>();

    static AgentView of(NodeSnapshot s) {
        AgentView v = new AgentView();
        v.seed(s);
        return v;
    }

    /** Holds exactly {@code s} (what an agent that resumes starts from); keeps what was received. */
    void seed(NodeSnapshot s) {
        setTypes.clear();
        sets.clear();
        policies.clear();
        endpoints.clear();
        for (IpSet set : s.getIpSetsList()) {
            setTypes.put(set.getId(), set.getType());
            sets.put(set.getId(), new HashSet<>(set.getMembersList()));
        }
        for (ActivePolicy p : s.getPoliciesList()) {
            policies.put(p.getId(), p.getPolicy());
        }
        for (Endpoint e : s.getEndpointsList()) {
            endpoints.put(e.getId(), e);
        }
        podCidrs = List.copyOf(s.getPodCidrsList());
    }

    /** Applies one message of a stream (checks sequence numbers). */
    void accept(ToAgent m) {
        if (lastSequence != 0 && m.getSequence() != lastSequence + 1) {
            throw new AssertionError("sequence gap: " + lastSequence + " -> " + m.getSequence());
        }
        lastSequence = m.getSequence();
        received.add(m);
        if (inSync && m.hasInSync()) {
            boundaries.add(m);
        } else if (inSync) {
            deltas.add(m);
        }
        apply(m);
    }

    /** Applies one message (no sequence check), enforcing reference order. */
    void apply(ToAgent m) {
        switch (m.getPayloadCase()) {
            case IP_SET_UPDATE -> {
                setTypes.put(m.getIpSetUpdate().getId(), m.getIpSetUpdate().getType());
                sets.put(
                        m.getIpSetUpdate().getId(),
                        new HashSet<>(m.getIpSetUpdate().getMembersList()));
            }
            case IP_SET_DELTA_UPDATE -> {
                Set<String> s = sets.get(m.getIpSetDeltaUpdate().getId());
                if (s == null) {
                    throw new AssertionError(
                            "delta for unknown set " + m.getIpSetDeltaUpdate().getId());
                }
                s.removeAll(m.getIpSetDeltaUpdate().getRemovedMembersList());
                s.addAll(m.getIpSetDeltaUpdate().getAddedMembersList());
            }
            case IP_SET_REMOVE -> {
                String id = m.getIpSetRemove().getId();
                for (Map.Entry<PolicyId, Policy> p : policies.entrySet()) {
                    if (setsOf(p.getValue()).contains(id)) {
                        throw new AssertionError("set " + id + " removed while " + p.getKey() + " uses it");
                    }
                }
                sets.remove(id);
                setTypes.remove(id);
            }
            case ACTIVE_POLICY_UPDATE -> {
                Policy p = m.getActivePolicyUpdate().getPolicy();
                for (String id : setsOf(p)) {
                    if (!sets.containsKey(id)) {
                        throw new AssertionError(
                                "policy " + m.getActivePolicyUpdate().getId() + " before set " + id);
                    }
                }
                policies.put(m.getActivePolicyUpdate().getId(), p);
            }
            case ACTIVE_POLICY_REMOVE -> {
                PolicyId id = m.getActivePolicyRemove().getId();
                for (Endpoint e : endpoints.values()) {
                    if (policiesOf(e).contains(id)) {
                        throw new AssertionError("policy " + id + " removed while " + e.getId() + " uses it");
                    }
                }
                policies.remove(id);
            }
            case WORKLOAD_ENDPOINT_UPDATE -> {
                Endpoint e = Endpoint.newBuilder()
                        .setId(m.getWorkloadEndpointUpdate().getId())
                        .setEndpoint(m.getWorkloadEndpointUpdate().getEndpoint())
                        .build();
                for (PolicyId id : policiesOf(e)) {
                    if (!policies.containsKey(id)) {
                        throw new AssertionError("endpoint " + e.getId() + " before policy " + id);
                    }
                }
                endpoints.put(e.getId(), e);
            }
            case WORKLOAD_ENDPOINT_REMOVE ->
                endpoints.remove(m.getWorkloadEndpointRemove().getId());
            case NODE_UPDATE -> podCidrs = List.copyOf(m.getNodeUpdate().getPodCidrsList());
            case IN_SYNC -> inSync = true;
            default -> throw new AssertionError("empty message " + m);
        }
    }

    /** The state as a snapshot with canonical ordering, for comparison. */
    NodeSnapshot toSnapshot(String node) {
        return canonical(NodeSnapshot.newBuilder()
                .setNode(node)
                .addAllIpSets(sets.entrySet().stream()
                        .map(e -> IpSet.newBuilder()
                                .setId(e.getKey())
                                .setType(setTypes.get(e.getKey()))
                                .addAllMembers(e.getValue())
                                .build())
                        .toList())
                .addAllPolicies(policies.entrySet().stream()
                        .map(e -> ActivePolicy.newBuilder()
                                .setId(e.getKey())
                                .setPolicy(e.getValue())
                                .build())
                        .toList())
                .addAllEndpoints(endpoints.values())
                .addAllPodCidrs(podCidrs)
                .build());
    }

    /** Sorts everything whose order carries no meaning (objects by id, set members); pod ranges stay as sent. */
    static NodeSnapshot canonical(NodeSnapshot s) {
        return NodeSnapshot.newBuilder()
                .setNode(s.getNode())
                .addAllIpSets(s.getIpSetsList().stream()
                        .map(x -> x.toBuilder()
                                .clearMembers()
                                .addAllMembers(
                                        x.getMembersList().stream().sorted().toList())
                                .build())
                        .sorted((a, b) -> a.getId().compareTo(b.getId()))
                        .toList())
                .addAllPolicies(s.getPoliciesList().stream()
                        .sorted((a, b) -> (a.getId().getTier() + "/" + a.getId().getName())
                                .compareTo(b.getId().getTier() + "/" + b.getId().getName()))
                        .toList())
                .addAllEndpoints(s.getEndpointsList().stream()
                        .sorted((a, b) -> (a.getId().getNamespace() + "/"
                                        + a.getId().getPod())
                                .compareTo(b.getId().getNamespace() + "/"
                                        + b.getId().getPod()))
                        .toList())
                .addAllPodCidrs(s.getPodCidrsList())
                .build();
    }

    static Set<String> setsOf(Policy p) {
        Set<String> ids = new LinkedHashSet<>();
        for (List<Rule> rules : List.of(p.getInboundRulesList(), p.getOutboundRulesList())) {
            for (Rule r : rules) {
                for (Peer peer : r.getPeersList()) {
                    if (peer.hasIpSetId()) {
                        ids.add(peer.getIpSetId());
                    }
                }
                for (PortMatch pm : r.getPortsList()) {
                    if (!pm.getNamedPortIpSetId().isEmpty()) {
                        ids.add(pm.getNamedPortIpSetId());
                    }
                }
            }
        }
        return ids;
    }

    static Set<PolicyId> policiesOf(Endpoint e) {
        Set<PolicyId> ids = new LinkedHashSet<>();
        for (TierInfo t : e.getEndpoint().getTiersList()) {
            for (String n : t.getIngressPoliciesList()) {
                ids.add(PolicyId.newBuilder().setTier(t.getName()).setName(n).build());
            }
            for (String n : t.getEgressPoliciesList()) {
                ids.add(PolicyId.newBuilder().setTier(t.getName()).setName(n).build());
            }
        }
        return ids;
    }
}
