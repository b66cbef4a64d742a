// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.policy.DecisionText;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.Snapshots;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyRemove;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetRemove;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeUpdate;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointRemove;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SnapshotAssemblerTest {

    private long seq = 100;

    private ToAgent next(ToAgent.Builder b) {
        return b.setSequence(seq++).build();
    }

    private ToAgent setUpdate(String id, IpSetType type, List<String> members) {
        return next(ToAgent.newBuilder()
                .setIpSetUpdate(IpSetUpdate.newBuilder().setId(id).setType(type).addAllMembers(members)));
    }

    private ToAgent delta(String id, List<String> added, List<String> removed) {
        return next(ToAgent.newBuilder()
                .setIpSetDeltaUpdate(IpSetDeltaUpdate.newBuilder()
                        .setId(id)
                        .addAllAddedMembers(added)
                        .addAllRemovedMembers(removed)));
    }

    private ToAgent policyUpdate(String tier, String name, String ruleId) {
        return next(ToAgent.newBuilder()
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                        .setPolicy(Policy.newBuilder()
                                .addInboundRules(
                                        Rule.newBuilder().setRuleId(ruleId).setAllPeers(true)))));
    }

    private ToAgent endpointUpdate(String ns, String pod, String ip) {
        return next(ToAgent.newBuilder()
                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace(ns).setPod(pod))
                        .setEndpoint(WorkloadEndpoint.newBuilder().addIps(ip))));
    }

    private static void applyAll(SnapshotAssembler a, List<ToAgent> messages) throws ResyncRequiredException {
        for (ToAgent m : messages) {
            a.apply(m);
        }
    }

    /** The messages a control plane would send for a snapshot: sets (chunked), policies, endpoints, InSync. */
    private List<ToAgent> messagesFor(NodeSnapshot s, int chunk) {
        List<ToAgent> out = new ArrayList<>();
        for (IpSet set : s.getIpSetsList()) {
            List<String> members = set.getMembersList();
            int first = Math.min(chunk, members.size());
            out.add(setUpdate(set.getId(), set.getType(), members.subList(0, first)));
            for (int i = first; i < members.size(); i += chunk) {
                out.add(delta(set.getId(), members.subList(i, Math.min(members.size(), i + chunk)), List.of()));
            }
        }
        for (ActivePolicy p : s.getPoliciesList()) {
            out.add(next(ToAgent.newBuilder()
                    .setActivePolicyUpdate(
                            ActivePolicyUpdate.newBuilder().setId(p.getId()).setPolicy(p.getPolicy()))));
        }
        for (Endpoint e : s.getEndpointsList()) {
            out.add(next(ToAgent.newBuilder()
                    .setWorkloadEndpointUpdate(
                            WorkloadEndpointUpdate.newBuilder().setId(e.getId()).setEndpoint(e.getEndpoint()))));
        }
        out.add(next(ToAgent.newBuilder().setInSync(InSync.getDefaultInstance())));
        return out;
    }

    private static NodeSnapshot sortedSnapshot(Random random) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode("n1");
        for (int s = 0; s < 5; s++) {
            List<String> members = new ArrayList<>();
            for (int m = 0; m < random.nextInt(40); m++) {
                members.add("10." + s + "." + (m / 250) + "." + (m % 250));
            }
            Collections.sort(members);
            b.addIpSets(IpSet.newBuilder().setId("s" + s).setType(IpSetType.IP).addAllMembers(members));
        }
        for (int p = 0; p < 4; p++) {
            b.addPolicies(ActivePolicy.newBuilder()
                    .setId(PolicyId.newBuilder().setTier("default").setName("ns/p" + p))
                    .setPolicy(Policy.newBuilder()
                            .addInboundRules(
                                    Rule.newBuilder().setRuleId("ingress[0]").setAllPeers(true))));
        }
        for (int e = 0; e < 6; e++) {
            b.addEndpoints(Endpoint.newBuilder()
                    .setId(EndpointId.newBuilder().setNamespace("ns").setPod("pod" + e))
                    .setEndpoint(
                            WorkloadEndpoint.newBuilder().addIps("10.9.0." + e).putLabels("app", "x" + e)));
        }
        return b.build();
    }

    @Test
    void roundTripsASnapshotSentInChunks() throws Exception {
        Random random = new Random(3);
        for (int round = 0; round < 20; round++) {
            NodeSnapshot snapshot = sortedSnapshot(random);
            SnapshotAssembler assembler = new SnapshotAssembler("n1");

            applyAll(assembler, messagesFor(snapshot, 1 + random.nextInt(7)));

            assertThat(assembler.snapshot()).isEqualTo(snapshot);
        }
    }

    @Test
    void orderIsDeterministicWhateverTheArrivalOrder() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        applyAll(
                a,
                List.of(
                        endpointUpdate("y", "b", "10.0.0.2"),
                        endpointUpdate("x", "z", "10.0.0.3"),
                        policyUpdate("default", "y/p", "ingress[0]"),
                        policyUpdate("admin", "z", "ingress[0]"),
                        setUpdate("b", IpSetType.IP, List.of("10.0.0.9", "10.0.0.10")),
                        setUpdate("a", IpSetType.IP, List.of())));
        NodeSnapshot s = a.snapshot();

        assertThat(s.getNode()).isEqualTo("n1");
        assertThat(s.getIpSetsList()).extracting(IpSet::getId).containsExactly("a", "b");
        assertThat(s.getIpSets(1).getMembersList()).containsExactly("10.0.0.10", "10.0.0.9");
        assertThat(s.getPoliciesList())
                .extracting(p -> p.getId().getTier() + "/" + p.getId().getName())
                .containsExactly("admin/z", "default/y/p");
        assertThat(s.getEndpointsList())
                .extracting(e -> e.getId().getNamespace() + "/" + e.getId().getPod())
                .containsExactly("x/z", "y/b");
    }

    @Test
    void updatesReplaceDeltasEditRemovesDelete() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        applyAll(
                a,
                List.of(
                        setUpdate("s", IpSetType.IP, List.of("10.0.0.1", "10.0.0.2")),
                        delta("s", List.of("10.0.0.3", "10.0.0.1"), List.of("10.0.0.2", "10.0.0.99")),
                        setUpdate("t", IpSetType.IP, List.of("10.0.0.7")),
                        setUpdate("t", IpSetType.IP_AND_PORT, List.of("10.0.0.8,tcp:80")),
                        policyUpdate("default", "ns/p", "ingress[0]"),
                        policyUpdate("default", "ns/p", "ingress[9]"),
                        policyUpdate("default", "ns/q", "ingress[0]"),
                        endpointUpdate("ns", "a", "10.1.0.1"),
                        endpointUpdate("ns", "a", "10.1.0.2"),
                        endpointUpdate("ns", "b", "10.1.0.3")));
        applyAll(
                a,
                List.of(
                        next(ToAgent.newBuilder()
                                .setWorkloadEndpointRemove(WorkloadEndpointRemove.newBuilder()
                                        .setId(EndpointId.newBuilder()
                                                .setNamespace("ns")
                                                .setPod("b")))),
                        next(ToAgent.newBuilder()
                                .setActivePolicyRemove(ActivePolicyRemove.newBuilder()
                                        .setId(PolicyId.newBuilder()
                                                .setTier("default")
                                                .setName("ns/q")))),
                        next(ToAgent.newBuilder()
                                .setIpSetRemove(IpSetRemove.newBuilder().setId("gone-already")))));

        NodeSnapshot s = a.snapshot();
        assertThat(s.getIpSets(0).getMembersList()).containsExactly("10.0.0.1", "10.0.0.3");
        assertThat(s.getIpSets(1).getType()).isEqualTo(IpSetType.IP_AND_PORT);
        assertThat(s.getIpSets(1).getMembersList()).containsExactly("10.0.0.8,tcp:80");
        assertThat(s.getPoliciesList())
                .singleElement()
                .satisfies(p ->
                        assertThat(p.getPolicy().getInboundRules(0).getRuleId()).isEqualTo("ingress[9]"));
        assertThat(s.getEndpointsList())
                .singleElement()
                .satisfies(e -> assertThat(e.getEndpoint().getIpsList()).containsExactly("10.1.0.2"));
        assertThat(a.lastSequence()).isEqualTo(seq - 1);

        a.apply(next(
                ToAgent.newBuilder().setIpSetRemove(IpSetRemove.newBuilder().setId("s"))));
        assertThat(a.ipSetCount()).isEqualTo(1);
        assertThat(a.policyCount()).isEqualTo(1);
        assertThat(a.endpointCount()).isEqualTo(1);
    }

    @Test
    void aSequenceGapIsATypedResyncAndChangesNothing() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        a.apply(setUpdate("s", IpSetType.IP, List.of("10.0.0.1")));
        seq++; // lose one message
        ToAgent late = setUpdate("s", IpSetType.IP, List.of());

        assertThatThrownBy(() -> a.apply(late)).isInstanceOfSatisfying(SequenceGapException.class, e -> {
            assertThat(e.expected()).isEqualTo(101);
            assertThat(e.actual()).isEqualTo(102);
        });
        assertThat(a.snapshot().getIpSets(0).getMembersList()).containsExactly("10.0.0.1");

        ToAgent repeated = ToAgent.newBuilder()
                .setSequence(100)
                .setInSync(InSync.getDefaultInstance())
                .build();
        assertThatThrownBy(() -> a.apply(repeated)).isInstanceOf(SequenceGapException.class);
    }

    @Test
    void deltaForAnUnknownSetRequiresAResync() {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        assertThatThrownBy(() -> a.apply(delta("nope", List.of("10.0.0.1"), List.of())))
                .isInstanceOf(ResyncRequiredException.class)
                .isNotInstanceOf(SequenceGapException.class)
                .hasMessageContaining("nope");
        assertThat(a.lastSequence()).isEqualTo(-1);
    }

    @Test
    void aMessageWithoutPayloadRequiresAResync() {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        assertThatThrownBy(() -> a.apply(ToAgent.newBuilder().setSequence(1).build()))
                .isInstanceOf(ResyncRequiredException.class);
    }

    private ToAgent nodeUpdate(String... cidrs) {
        return next(ToAgent.newBuilder().setNodeUpdate(NodeUpdate.newBuilder().addAllPodCidrs(List.of(cidrs))));
    }

    @Test
    void aNodeUpdateReplacesThePodRanges() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        assertThat(a.apply(nodeUpdate("10.244.1.0/24", "fd00:1::/64"))).isEqualTo(ToAgent.PayloadCase.NODE_UPDATE);
        a.apply(endpointUpdate("ns", "x", "10.244.1.5"));
        assertThat(a.snapshot().getPodCidrsList()).containsExactly("10.244.1.0/24", "fd00:1::/64");

        a.apply(nodeUpdate("10.244.2.0/24"));
        assertThat(a.snapshot().getPodCidrsList()).containsExactly("10.244.2.0/24");
        assertThat(a.snapshot().getEndpointsCount()).isEqualTo(1);

        a.apply(nodeUpdate());
        assertThat(a.snapshot().getPodCidrsList()).isEmpty();
    }

    @Test
    void aMalformedPodRangeIsReportedAndIgnoredTheOthersKeptInCanonicalText() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        a.apply(nodeUpdate("10.244.1.9/24", "junk", "10.244.1.0/24", "10.0.0.0/33", "FD00::/64"));

        assertThat(a.snapshot().getPodCidrsList()).containsExactly("10.244.1.0/24", "fd00::/64");
        assertThat(a.podCidrProblems())
                .containsExactly("invalid pod CIDR \"junk\" ignored", "invalid pod CIDR \"10.0.0.0/33\" ignored");
        SnapshotIndex.compile(a.snapshot()); // what the agent compiles still compiles

        a.apply(nodeUpdate("10.244.1.0/24"));
        assertThat(a.podCidrProblems())
                .as("problems of the last NodeUpdate only")
                .isEmpty();
    }

    @Test
    void resetForgetsThePodRanges() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        a.apply(nodeUpdate("10.244.1.0/24", "junk"));
        a.reset();
        assertThat(a.snapshot())
                .isEqualTo(NodeSnapshot.newBuilder().setNode("n1").build());
        assertThat(a.podCidrProblems()).isEmpty();
    }

    @Test
    void resetStartsANewStreamAtAnySequence() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        a.apply(setUpdate("s", IpSetType.IP, List.of("10.0.0.1")));
        a.reset();

        assertThat(a.snapshot())
                .isEqualTo(NodeSnapshot.newBuilder().setNode("n1").build());
        assertThat(a.apply(ToAgent.newBuilder()
                        .setSequence(1)
                        .setInSync(InSync.getDefaultInstance())
                        .build()))
                .isEqualTo(ToAgent.PayloadCase.IN_SYNC);
        assertThat(a.lastSequence()).isEqualTo(1);
    }

    @Test
    void consecutiveSnapshotsShareWhatDidNotChange() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        applyAll(
                a,
                List.of(
                        setUpdate("a", IpSetType.IP, List.of("10.0.0.1")),
                        setUpdate("b", IpSetType.IP, List.of("10.0.0.2")),
                        policyUpdate("default", "p", "ingress[0]"),
                        endpointUpdate("ns", "x", "10.0.0.9")));
        NodeSnapshot first = a.snapshot();

        a.apply(delta("b", List.of("10.0.0.3"), List.of()));
        a.apply(delta("a", List.of(), List.of("10.9.9.9"))); // not a member: no change
        NodeSnapshot second = a.snapshot();

        // The index update and the re-judging find unchanged parts by one identity comparison.
        assertThat(second.getIpSets(0)).isSameAs(first.getIpSets(0));
        assertThat(second.getIpSets(1)).isNotSameAs(first.getIpSets(1));
        assertThat(second.getIpSets(1).getMembersList()).containsExactly("10.0.0.2", "10.0.0.3");
        assertThat(second.getPolicies(0)).isSameAs(first.getPolicies(0));
        assertThat(second.getEndpoints(0)).isSameAs(first.getEndpoints(0));
    }

    /**
     * Audit M2 on the agent's own path: a newer control plane's set type (99) arrives on the wire,
     * is kept by the assembler, and the admin Deny that names the set denies all instead of nothing.
     */
    @Test
    void anAdminDenyNamingASetOfANewerTypeDeniesAll() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        applyAll(
                a,
                List.of(
                        next(ToAgent.newBuilder()
                                .setIpSetUpdate(IpSetUpdate.newBuilder()
                                        .setId("s:X")
                                        .setTypeValue(99)
                                        .addMembers("10.9.0.1"))),
                        next(ToAgent.newBuilder()
                                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                                        .setId(PolicyId.newBuilder()
                                                .setTier("admin")
                                                .setName("deny-x"))
                                        .setPolicy(Policy.newBuilder()
                                                .addInboundRules(Rule.newBuilder()
                                                        .setRuleId("ingress[0]")
                                                        .setAction(Action.DENY)
                                                        .addPeers(Peer.newBuilder()
                                                                .setIpSetId("s:X")))))),
                        next(ToAgent.newBuilder()
                                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                                        .setId(EndpointId.newBuilder()
                                                .setNamespace("ns")
                                                .setPod("a"))
                                        .setEndpoint(WorkloadEndpoint.newBuilder()
                                                .addIps("10.0.0.1")
                                                .addTiers(TierInfo.newBuilder()
                                                        .setName("admin")
                                                        .setDefaultAction(Action.PASS)
                                                        .addIngressPolicies("deny-x")))))));

        SnapshotIndex index = SnapshotIndex.compile(a.snapshot());

        int code = index.decide(Snapshots.packet("10.9.0.1", "10.0.0.1", Snapshots.TCP, 80));
        assertThat(new DecisionText(index).describe(code)).isEqualTo("DENY ingress: denied by admin/deny-x ingress[0]");
    }
    /**
     * Security audit L6: a pod reported as "::ffff:10.0.0.5" was put in the kernel's IPv4 set (so its
     * IPv4 packets were queued) while the index kept it as IPv6 (so those packets found no endpoint
     * and were allowed). The assembler canonicalises an IPv4-mapped endpoint address to IPv4, so the
     * index, the kernel sets and conntrack re-judging all see one address.
     */
    @Test
    void anIpv4MappedEndpointAddressIsTheIpv4AddressForTheIndexAndTheKernelSets() throws Exception {
        SnapshotAssembler a = new SnapshotAssembler("n1");
        applyAll(
                a,
                List.of(
                        next(ToAgent.newBuilder()
                                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                                        .setId(PolicyId.newBuilder()
                                                .setTier("default")
                                                .setName("ns/deny-all"))
                                        .setPolicy(Policy.newBuilder()))),
                        next(ToAgent.newBuilder()
                                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                                        .setId(EndpointId.newBuilder()
                                                .setNamespace("ns")
                                                .setPod("a"))
                                        .setEndpoint(WorkloadEndpoint.newBuilder()
                                                .addIps("::ffff:10.0.0.5")
                                                .addIps("fd00::5")
                                                .addTiers(TierInfo.newBuilder()
                                                        .setName("default")
                                                        .setDefaultAction(Action.DENY)
                                                        .addIngressPolicies("ns/deny-all")
                                                        .addEgressPolicies("ns/deny-all")))))));

        NodeSnapshot snapshot = a.snapshot();
        SnapshotIndex index = SnapshotIndex.compile(snapshot);

        int code = index.decide(Snapshots.packet("10.0.0.5", "10.0.0.9", Snapshots.TCP, 80));
        assertThat(new DecisionText(index).describe(code)).startsWith("DENY egress");
        assertThat(snapshot.getEndpoints(0).getEndpoint().getIpsList()).containsExactly("10.0.0.5", "fd00::5");
        io.kubeverdict.agent.state.SelectedAddresses selected =
                io.kubeverdict.agent.state.SelectedAddresses.of(snapshot);
        assertThat(selected.ipv4()).containsExactly("10.0.0.5");
        assertThat(selected.ipv6()).containsExactly("fd00::5");
    }
}
