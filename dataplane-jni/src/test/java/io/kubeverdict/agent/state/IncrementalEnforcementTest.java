// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.IndexUpdate;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.SyntheticCluster;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyRemove;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetRemove;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointRemove;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The agent's path for changes, end to end short of the kernel: random ToAgent sequences (set
 * deltas, small sets replaced whole, sets and policies added and removed, endpoints changed, added
 * and removed) applied by the {@link SnapshotAssembler} in bursts, each burst enforced by the
 * {@link StateEnforcer}; the generation it swaps in must decide and explain every probe exactly as
 * a compile of the assembled snapshot from scratch, and most bursts must take the incremental path.
 */
class IncrementalEnforcementTest {

    private static final int SETS = 10;
    private static final int POLICIES = 12;
    private static final int ENDPOINTS = 16;

    private final StateHolder holder = new StateHolder(0);
    private final StateEnforcer enforcer = new StateEnforcer(holder, selected -> {}, Clock.systemUTC());
    private final SnapshotAssembler assembler = new SnapshotAssembler("n1");
    private long sequence;

    @Test
    void randomDeltaBurstsDecideAsACompileFromScratch() throws Exception {
        Random random = new Random(41);
        for (ToAgent m : initial(random)) {
            assembler.apply(m);
        }
        assembler.apply(message(ToAgent.newBuilder().setInSync(InSync.getDefaultInstance())));
        enforcer.enforce(assembler.snapshot(), sequence);
        assertThat(enforcer.lastIndexUpdate().incremental()).isFalse();

        int incremental = 0;
        int bursts = 300;
        for (int burst = 0; burst < bursts; burst++) {
            for (int k = 1 + random.nextInt(4); k > 0; k--) {
                assembler.apply(randomChange(random));
            }
            NodeSnapshot snapshot = assembler.snapshot();
            enforcer.enforce(snapshot, sequence);
            IndexUpdate.Result how = enforcer.lastIndexUpdate();
            incremental += how.incremental() ? 1 : 0;

            SnapshotIndex enforced = holder.current().index();
            SnapshotIndex fresh = SnapshotIndex.compile(snapshot);
            assertThat(enforced.problems()).isEqualTo(fresh.problems());
            for (int i = 0; i < 60; i++) {
                PacketTuple p = packet(random);
                String what = "burst " + burst + " (" + how.summary() + "): " + p;
                assertThat(enforced.decide(p)).as(what).isEqualTo(fresh.decide(p));
                assertThat(new Explainer(enforced).explain(p)).as(what).isEqualTo(new Explainer(fresh).explain(p));
            }
        }
        assertThat(incremental).as("bursts applied incrementally").isGreaterThan(bursts * 3 / 4);
    }

    @Test
    void oneMemberAndOneEndpointOnTheLargeNodeAreAppliedInPlace() throws Exception {
        SyntheticCluster cluster = new SyntheticCluster(7, 512);
        NodeSnapshot snapshot = cluster.snapshot;
        for (IpSet set : snapshot.getIpSetsList()) {
            assembler.apply(message(ToAgent.newBuilder()
                    .setIpSetUpdate(IpSetUpdate.newBuilder()
                            .setId(set.getId())
                            .setType(set.getType())
                            .addAllMembers(set.getMembersList()))));
        }
        for (ActivePolicy p : snapshot.getPoliciesList()) {
            assembler.apply(message(ToAgent.newBuilder()
                    .setActivePolicyUpdate(io.kubeverdict.proto.v1.ActivePolicyUpdate.newBuilder()
                            .setId(p.getId())
                            .setPolicy(p.getPolicy()))));
        }
        for (Endpoint e : snapshot.getEndpointsList()) {
            assembler.apply(message(ToAgent.newBuilder()
                    .setWorkloadEndpointUpdate(
                            WorkloadEndpointUpdate.newBuilder().setId(e.getId()).setEndpoint(e.getEndpoint()))));
        }
        enforcer.enforce(assembler.snapshot(), sequence);
        SnapshotIndex compiled = holder.current().index();

        // A cluster pod joins a set a rule names: one member.
        String pod = SyntheticCluster.v4(123_456);
        PacketTuple fromPod = null;
        for (PacketTuple p : cluster.packets) {
            if (p.family == IpAddress.V4 && holder.current().index().endpointAt(IpAddress.V4, 0, p.dstLo) >= 0) {
                fromPod =
                        new PacketTuple().set(IpAddress.parse(pod), IpAddress.v4((int) p.dstLo), p.protocol, p.dstPort);
                break;
            }
        }
        assembler.apply(message(ToAgent.newBuilder()
                .setIpSetDeltaUpdate(IpSetDeltaUpdate.newBuilder().setId("s7").addAddedMembers(pod))));
        NodeSnapshot afterMember = assembler.snapshot();
        enforcer.enforce(afterMember, sequence);
        assertThat(enforcer.lastIndexUpdate().incremental()).isTrue();
        assertThat(enforcer.lastIndexUpdate().summary()).isEqualTo("1 set member");
        assertSameVerdicts(holder.current().index(), SnapshotIndex.compile(afterMember), cluster.packets, fromPod);

        // One endpoint's labels and tiers change (a pod relabelled: other policies select it).
        Endpoint e = afterMember.getEndpoints(5);
        WorkloadEndpoint relabelled = e.getEndpoint().toBuilder()
                .putLabels("app", "other")
                .clearTiers()
                .addTiers(afterMember.getEndpoints(6).getEndpoint().getTiers(0))
                .build();
        assembler.apply(message(ToAgent.newBuilder()
                .setWorkloadEndpointUpdate(
                        WorkloadEndpointUpdate.newBuilder().setId(e.getId()).setEndpoint(relabelled))));
        NodeSnapshot afterEndpoint = assembler.snapshot();
        enforcer.enforce(afterEndpoint, sequence);
        assertThat(enforcer.lastIndexUpdate().incremental()).isTrue();
        assertThat(enforcer.lastIndexUpdate().summary()).isEqualTo("endpoints");
        assertSameVerdicts(holder.current().index(), SnapshotIndex.compile(afterEndpoint), cluster.packets, fromPod);
        assertThat(holder.current().index()).isNotSameAs(compiled);
    }

    private static void assertSameVerdicts(
            SnapshotIndex enforced, SnapshotIndex fresh, List<PacketTuple> packets, PacketTuple extra) {
        List<PacketTuple> all = new ArrayList<>(packets);
        all.add(extra);
        for (PacketTuple p : all) {
            assertThat(enforced.decide(p)).as(p.toString()).isEqualTo(fresh.decide(p));
        }
    }

    // ------------------------------------------------------------------ messages

    private ToAgent message(ToAgent.Builder b) {
        return b.setSequence(++sequence).build();
    }

    private List<ToAgent> initial(Random random) {
        List<ToAgent> out = new ArrayList<>();
        for (int s = 0; s < SETS; s++) {
            out.add(fullSet(random, "s" + s, s < 7 ? IpSetType.IP : IpSetType.IP_AND_PORT));
        }
        for (int p = 0; p < POLICIES; p++) {
            out.add(policy(random, p));
        }
        for (int e = 0; e < ENDPOINTS; e++) {
            out.add(endpoint(random, e));
        }
        return out;
    }

    private ToAgent randomChange(Random random) {
        int x = random.nextInt(100);
        String set = "s" + random.nextInt(SETS);
        IpSetType type = Integer.parseInt(set.substring(1)) < 7 ? IpSetType.IP : IpSetType.IP_AND_PORT;
        if (x < 50) {
            IpSetDeltaUpdate.Builder d = IpSetDeltaUpdate.newBuilder().setId(set);
            for (int k = random.nextInt(3); k > 0; k--) {
                d.addRemovedMembers(member(random, type));
            }
            for (int k = random.nextInt(3); k > 0; k--) {
                d.addAddedMembers(member(random, type));
            }
            if (assembler.snapshot().getIpSetsList().stream()
                    .noneMatch(s -> s.getId().equals(set))) {
                return fullSet(random, set, type); // a delta for a removed set would be a resync
            }
            return message(ToAgent.newBuilder().setIpSetDeltaUpdate(d));
        }
        if (x < 58) {
            return fullSet(random, set, type); // the control plane replaces small sets whole
        }
        if (x < 61) {
            return message(
                    ToAgent.newBuilder().setIpSetRemove(IpSetRemove.newBuilder().setId(set)));
        }
        if (x < 67) {
            return policy(random, random.nextInt(POLICIES));
        }
        if (x < 69) {
            return message(ToAgent.newBuilder()
                    .setActivePolicyRemove(ActivePolicyRemove.newBuilder()
                            .setId(PolicyId.newBuilder().setTier("default").setName("p" + random.nextInt(POLICIES)))));
        }
        if (x < 93) {
            return endpoint(random, random.nextInt(ENDPOINTS + 4)); // some are new
        }
        return message(ToAgent.newBuilder()
                .setWorkloadEndpointRemove(WorkloadEndpointRemove.newBuilder()
                        .setId(EndpointId.newBuilder()
                                .setNamespace("ns")
                                .setPod("pod" + random.nextInt(ENDPOINTS + 4)))));
    }

    private ToAgent fullSet(Random random, String id, IpSetType type) {
        IpSetUpdate.Builder u = IpSetUpdate.newBuilder().setId(id).setType(type);
        for (int k = random.nextInt(12); k > 0; k--) {
            u.addMembers(member(random, type));
        }
        return message(ToAgent.newBuilder().setIpSetUpdate(u));
    }

    private ToAgent policy(Random random, int p) {
        Policy.Builder policy = Policy.newBuilder();
        for (int r = random.nextInt(4); r > 0; r--) {
            policy.addInboundRules(rule(random, "ingress[" + r + "]"));
        }
        for (int r = random.nextInt(3); r > 0; r--) {
            policy.addOutboundRules(rule(random, "egress[" + r + "]"));
        }
        return message(ToAgent.newBuilder()
                .setActivePolicyUpdate(io.kubeverdict.proto.v1.ActivePolicyUpdate.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("default").setName("p" + p))
                        .setPolicy(policy)));
    }

    private static Rule rule(Random random, String id) {
        Rule.Builder r = Rule.newBuilder().setRuleId(id).setAction(random.nextInt(5) == 0 ? Action.DENY : Action.ALLOW);
        int peers = random.nextInt(3);
        r.setAllPeers(peers == 0);
        for (int k = 0; k < peers; k++) {
            r.addPeers(Peer.newBuilder().setIpSetId("s" + random.nextInt(7)));
        }
        if (random.nextInt(3) == 0) {
            r.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(80));
        }
        if (random.nextInt(4) == 0) {
            r.addPorts(PortMatch.newBuilder().setNamedPortIpSetId("s" + (7 + random.nextInt(3))));
        }
        return r.build();
    }

    private ToAgent endpoint(Random random, int e) {
        WorkloadEndpoint.Builder w = WorkloadEndpoint.newBuilder().putLabels("app", "a" + random.nextInt(3));
        w.addIps(address(random, false));
        if (random.nextBoolean()) {
            w.addIps(address(random, true));
        }
        if (random.nextInt(5) != 0) {
            TierInfo.Builder tier = TierInfo.newBuilder().setName("default").setDefaultAction(Action.DENY);
            for (int k = random.nextInt(3); k > 0; k--) {
                tier.addIngressPolicies("p" + random.nextInt(POLICIES));
            }
            for (int k = random.nextInt(2); k > 0; k--) {
                tier.addEgressPolicies("p" + random.nextInt(POLICIES));
            }
            w.addTiers(tier);
        }
        return message(ToAgent.newBuilder()
                .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("ns").setPod("pod" + e))
                        .setEndpoint(w)));
    }

    private static String member(Random random, IpSetType type) {
        String a = address(random, random.nextBoolean());
        return type == IpSetType.IP ? a : a + ",tcp:" + (random.nextBoolean() ? 80 : 8080);
    }

    private static String address(Random random, boolean v6) {
        return v6 ? "fd00:1::" + Integer.toHexString(random.nextInt(24)) : "10.1.0." + random.nextInt(24);
    }

    private static PacketTuple packet(Random random) {
        boolean v6 = random.nextBoolean();
        return new PacketTuple()
                .set(
                        IpAddress.parse(address(random, v6)),
                        IpAddress.parse(address(random, v6)),
                        random.nextInt(6) == 0 ? Protocol.UDP_VALUE : Protocol.TCP_VALUE,
                        random.nextBoolean() ? 80 : 8080);
    }
}
