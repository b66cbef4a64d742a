package io.kubeverdict.agent.testing;

import io.kubeverdict.agent.sync.SnapshotBuilder;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A minimal builder for sync-client tests until the shared SnapshotAssembler is merged: it keeps
 * the latest update of each IP set, policy and endpoint and rejects an endpoint referring to an
 * unknown policy, which is enough to exercise the client's ordering and resync paths.
 */
public final class MapSnapshotBuilder implements SnapshotBuilder {
    private final Map<String, IpSet> ipSets = new LinkedHashMap<>();
    private final Map<String, ActivePolicy> policies = new LinkedHashMap<>();
    private final Map<String, Endpoint> endpoints = new LinkedHashMap<>();

    @Override
    public void apply(ToAgent m) {
        switch (m.getPayloadCase()) {
            case IP_SET_UPDATE -> ipSets.put(m.getIpSetUpdate().getId(), IpSet.newBuilder()
                    .setId(m.getIpSetUpdate().getId()).setType(m.getIpSetUpdate().getType())
                    .addAllMembers(m.getIpSetUpdate().getMembersList()).build());
            case IP_SET_REMOVE -> ipSets.remove(m.getIpSetRemove().getId());
            case ACTIVE_POLICY_UPDATE -> policies.put(m.getActivePolicyUpdate().getId().getName(), ActivePolicy.newBuilder()
                    .setId(m.getActivePolicyUpdate().getId()).setPolicy(m.getActivePolicyUpdate().getPolicy()).build());
            case ACTIVE_POLICY_REMOVE -> policies.remove(m.getActivePolicyRemove().getId().getName());
            case WORKLOAD_ENDPOINT_UPDATE -> {
                var u = m.getWorkloadEndpointUpdate();
                u.getEndpoint().getTiersList().forEach(t -> t.getIngressPoliciesList().forEach(p -> {
                    if (!policies.containsKey(p)) {
                        throw new IllegalStateException("endpoint refers to unknown policy " + p);
                    }
                }));
                endpoints.put(u.getId().getNamespace() + "/" + u.getId().getPod(),
                        Endpoint.newBuilder().setId(u.getId()).setEndpoint(u.getEndpoint()).build());
            }
            case WORKLOAD_ENDPOINT_REMOVE -> endpoints.remove(
                    m.getWorkloadEndpointRemove().getId().getNamespace() + "/" + m.getWorkloadEndpointRemove().getId().getPod());
            default -> throw new IllegalArgumentException("unexpected " + m.getPayloadCase());
        }
    }

    @Override
    public NodeSnapshot snapshot() {
        return NodeSnapshot.newBuilder().addAllIpSets(ipSets.values()).addAllPolicies(policies.values())
                .addAllEndpoints(endpoints.values()).build();
    }
}
