// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;

/** Complete node snapshots for tests, built from the same messages the sync tests script. */
public final class SnapshotFixtures {
    private SnapshotFixtures() {}

    /**
     * Node "node-1": x/a (10.0.0.1, fd00::1) isolated for ingress by x/allow-from-b, which allows
     * only x/b (10.0.0.2); x/b and x/c (10.0.0.3) are not selected by anything.
     */
    /**
     * {@link #allowFromB} with a staged deny-all NetworkPolicy x/deny-all (sent as
     * "staged:x/deny-all") selecting x/c for ingress: x/c's would-be tiers list it, its enforced
     * tiers stay empty (not isolated).
     */
    public static NodeSnapshot stagedDenyAllForC() throws Exception {
        NodeSnapshot s = allowFromB();
        NodeSnapshot.Builder b = s.toBuilder()
                .addPolicies(io.kubeverdict.proto.v1.ActivePolicy.newBuilder()
                        .setId(io.kubeverdict.proto.v1.PolicyId.newBuilder()
                                .setTier("default")
                                .setName("staged:x/deny-all"))
                        .setPolicy(io.kubeverdict.proto.v1.Policy.getDefaultInstance()));
        for (int i = 0; i < b.getEndpointsCount(); i++) {
            if (b.getEndpoints(i).getId().getPod().equals("c")) {
                b.setEndpoints(
                        i,
                        b.getEndpoints(i).toBuilder()
                                .setEndpoint(b.getEndpoints(i).getEndpoint().toBuilder()
                                        .addStagedTiers(io.kubeverdict.proto.v1.TierInfo.newBuilder()
                                                .setName("default")
                                                .setDefaultAction(io.kubeverdict.proto.v1.Action.DENY)
                                                .addIngressPolicies("staged:x/deny-all"))));
            }
        }
        return b.build();
    }

    public static NodeSnapshot allowFromB() throws Exception {
        SnapshotAssembler b = new SnapshotAssembler("node-1");
        for (ToAgent m : new ToAgent[] {
            Messages.ipSet(1, "set-b", "10.0.0.2"),
            Messages.allowIngressFrom(2, "x/allow-from-b", "set-b"),
            Messages.endpoint(3, "x", "a", "10.0.0.1", "x/allow-from-b"),
            Messages.endpoint(4, "x", "b", "10.0.0.2"),
            Messages.endpoint(5, "x", "c", "10.0.0.3")
        }) {
            b.apply(m);
        }
        NodeSnapshot s = b.snapshot();
        // x/a is dual-stack
        return s.toBuilder()
                .setNode("node-1")
                .setEndpoints(
                        0,
                        s.getEndpoints(0).toBuilder()
                                .setEndpoint(s.getEndpoints(0).getEndpoint().toBuilder()
                                        .addIps("fd00::1")))
                .build();
    }

    public static final DomainNames DOMAIN_API = DomainNames.newBuilder()
            .addPatterns("api.test")
            .setLearnedSetId("d:api")
            .build();
    public static final DomainNames DOMAIN_SVC = DomainNames.newBuilder()
            .addPatterns("*.svc.test")
            .setLearnedSetId("d:svc")
            .build();

    /**
     * Node "n1": t/client (10.0.0.1, fd00::1) may reach api.test and *.svc.test; everything else
     * is denied by the baseline; t/other (10.0.0.2) is selected by nothing.
     */
    public static NodeSnapshot domainNames() {
        Rule api = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId("egress[0]")
                .addPeers(Peer.newBuilder().setDomainNames(DOMAIN_API))
                .build();
        Rule svc = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId("egress[1]")
                .addPeers(Peer.newBuilder().setDomainNames(DOMAIN_SVC))
                .build();
        Rule deny = Rule.newBuilder()
                .setAction(Action.DENY)
                .setRuleId("egress[0]")
                .setAllPeers(true)
                .build();
        return NodeSnapshot.newBuilder()
                .setNode("n1")
                .addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("admin").setName("names"))
                        .setPolicy(Policy.newBuilder().addOutboundRules(api).addOutboundRules(svc)))
                .addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("baseline").setName("default"))
                        .setPolicy(Policy.newBuilder().addOutboundRules(deny)))
                .addEndpoints(Endpoint.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("t").setPod("client"))
                        .setEndpoint(WorkloadEndpoint.newBuilder()
                                .addIps("10.0.0.1")
                                .addIps("fd00::1")
                                .addTiers(TierInfo.newBuilder()
                                        .setName("admin")
                                        .setDefaultAction(Action.PASS)
                                        .addEgressPolicies("names"))
                                .addTiers(TierInfo.newBuilder()
                                        .setName("baseline")
                                        .setDefaultAction(Action.ALLOW)
                                        .addEgressPolicies("default"))
                                .addDomainWatches(DOMAIN_API)
                                .addDomainWatches(DOMAIN_SVC)))
                .addEndpoints(Endpoint.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("t").setPod("other"))
                        .setEndpoint(WorkloadEndpoint.newBuilder().addIps("10.0.0.2")))
                .build();
    }
}
