// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
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
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A deterministic node snapshot shaped like one node of a 150k-pod / 10k-policy cluster: 110
 * local dual-stack endpoints in 11 namespaces, each selected for ingress by 10 policies (and a
 * third of them for egress by 3), policies with 1-4 rules mixing IP-set peers (sets of 5 to
 * 5000 cluster pods, v4 and v6), ipBlocks with excepts, port lists, endPort ranges and named
 * ports; plus packets towards and from those endpoints. Used by tests and the JMH benchmark.
 */
public final class SyntheticCluster {

    public static final int CLUSTER_PODS = 150_000;
    public static final int LOCAL_ENDPOINTS = 110;
    public static final int LOCAL_NAMESPACES = 11;
    public static final int POLICIES_PER_NAMESPACE = 20;
    public static final int INGRESS_POLICIES_PER_POD = 10;
    public static final int SETS = 400;

    public final NodeSnapshot snapshot;
    public final List<PacketTuple> packets;

    private Random random;

    /** Admin-tier policies of the cluster ({@link #withAdminTiers}), of which each endpoint is a subject of a few. */
    public static final int ADMIN_POLICIES = 100;

    public static final int ADMIN_POLICIES_PER_POD = 3;

    public SyntheticCluster(long seed, int packetCount) {
        this(seed, packetCount, false);
    }

    /**
     * @param adminTiers also an admin tier (each endpoint the subject of {@link #ADMIN_POLICIES_PER_POD}
     *     of the {@link #ADMIN_POLICIES} admin policies, rules Allow/Deny/Pass over the same sets,
     *     ipBlocks and ports) and a baseline tier (one policy for every endpoint) in both
     *     directions; the NetworkPolicy part and the packets are the same as without
     */
    public SyntheticCluster(long seed, int packetCount, boolean adminTiers) {
        random = new Random(seed);
        NodeSnapshot base = buildSnapshot();
        packets = buildPackets(packetCount);
        snapshot = adminTiers ? withAdminTiers(base, new Random(seed + 1)) : base;
    }

    private NodeSnapshot withAdminTiers(NodeSnapshot base, Random r) {
        NodeSnapshot.Builder b = base.toBuilder();
        Random saved = random;
        random = r;
        try {
            for (int a = 0; a < ADMIN_POLICIES; a++) {
                b.addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("admin").setName("anp" + a))
                        .setPolicy(adminPolicy(a)));
            }
            b.addPolicies(ActivePolicy.newBuilder()
                    .setId(PolicyId.newBuilder().setTier("baseline").setName("default"))
                    .setPolicy(Policy.newBuilder()
                            .addInboundRules(adminRule("ingress[0]", Action.ALLOW))
                            .addInboundRules(Rule.newBuilder()
                                    .setAction(Action.DENY)
                                    .setRuleId("ingress[1]")
                                    .addPeers(Peer.newBuilder().setIpSetId("s" + r.nextInt(SETS))))
                            .addOutboundRules(adminRule("egress[0]", Action.DENY))));
            for (int e = 0; e < b.getEndpointsCount(); e++) {
                WorkloadEndpoint.Builder we = b.getEndpointsBuilder(e).getEndpointBuilder();
                List<TierInfo> tiers = new ArrayList<>(we.getTiersList());
                TierInfo.Builder admin = TierInfo.newBuilder().setName("admin").setDefaultAction(Action.PASS);
                // Mixed subjects: policies a pod is a subject of overlap with its neighbours'.
                int first = (e * 7 + r.nextInt(5)) % ADMIN_POLICIES;
                for (int k = 0; k < ADMIN_POLICIES_PER_POD; k++) {
                    String name = "anp" + (first + k * 13) % ADMIN_POLICIES;
                    admin.addIngressPolicies(name);
                    if (k == 0) {
                        admin.addEgressPolicies(name);
                    }
                }
                TierInfo baseline = TierInfo.newBuilder()
                        .setName("baseline")
                        .setDefaultAction(Action.ALLOW)
                        .addIngressPolicies("default")
                        .addEgressPolicies("default")
                        .build();
                we.clearTiers().addTiers(admin).addAllTiers(tiers).addTiers(baseline);
            }
        } finally {
            random = saved;
        }
        return b.build();
    }

    private Policy adminPolicy(int a) {
        Policy.Builder p = Policy.newBuilder();
        int rules = 1 + random.nextInt(3);
        for (int k = 0; k < rules; k++) {
            int x = random.nextInt(10);
            p.addInboundRules(
                    adminRule("ingress[" + k + "]", x < 3 ? Action.DENY : x < 7 ? Action.PASS : Action.ALLOW));
        }
        p.addOutboundRules(adminRule("egress[0]", random.nextBoolean() ? Action.PASS : Action.DENY));
        return p.build();
    }

    private Rule adminRule(String id, Action action) {
        return rule(id).toBuilder().setAction(action).build();
    }

    public static String v4(int pod) {
        return "10." + (128 + (pod >>> 16)) + "." + ((pod >>> 8) & 0xFF) + "." + (pod & 0xFF);
    }

    public static String v6(int pod) {
        return "fd00:10::" + Integer.toHexString(pod >>> 16) + ":" + Integer.toHexString(pod & 0xFFFF);
    }

    /** Local endpoint e is cluster pod LOCAL_BASE + e * 7. */
    static int localPod(int e) {
        return 70_000 + e * 7;
    }

    private NodeSnapshot buildSnapshot() {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode("node-0042");
        for (int s = 0; s < SETS; s++) {
            // Log-uniform sizes between 5 and 5000 members; each member pod contributes v4 and v6.
            int size = (int) Math.round(Math.exp(Math.log(5) + random.nextDouble() * (Math.log(5000) - Math.log(5))));
            Set<String> members = new LinkedHashSet<>();
            int start = random.nextInt(CLUSTER_PODS);
            for (int m = 0; m < size; m++) {
                // Half the members are a namespace-like run of pods, half scattered.
                int pod = m % 2 == 0 ? (start + m) % CLUSTER_PODS : random.nextInt(CLUSTER_PODS);
                members.add(v4(pod));
                members.add(v6(pod));
            }
            if (s % 10 == 0) {
                for (int e = 0; e < LOCAL_ENDPOINTS; e += 3) {
                    members.add(v4(localPod(e)));
                    members.add(v6(localPod(e)));
                }
            }
            b.addIpSets(IpSet.newBuilder().setId("s" + s).setType(IpSetType.IP).addAllMembers(members));
        }
        for (int n = 0; n < 20; n++) {
            List<String> members = new ArrayList<>();
            for (int e = n % 4; e < LOCAL_ENDPOINTS; e += 4) {
                members.add(v4(localPod(e)) + ",tcp:" + (8080 + n % 3));
                members.add(v6(localPod(e)) + ",tcp:" + (8080 + n % 3));
            }
            b.addIpSets(IpSet.newBuilder()
                    .setId("np" + n)
                    .setType(IpSetType.IP_AND_PORT)
                    .addAllMembers(members));
        }
        for (int ns = 0; ns < LOCAL_NAMESPACES; ns++) {
            for (int p = 0; p < POLICIES_PER_NAMESPACE; p++) {
                b.addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("default").setName("ns" + ns + "/p" + p))
                        .setPolicy(policy()));
            }
        }
        for (int e = 0; e < LOCAL_ENDPOINTS; e++) {
            int ns = e % LOCAL_NAMESPACES;
            TierInfo.Builder tier = TierInfo.newBuilder().setName("default").setDefaultAction(Action.DENY);
            int first = random.nextInt(POLICIES_PER_NAMESPACE);
            for (int k = 0; k < INGRESS_POLICIES_PER_POD; k++) {
                tier.addIngressPolicies("ns" + ns + "/p" + (first + k) % POLICIES_PER_NAMESPACE);
            }
            if (e % 3 == 0) {
                for (int k = 0; k < 3; k++) {
                    tier.addEgressPolicies("ns" + ns + "/p" + (first + 2 * k) % POLICIES_PER_NAMESPACE);
                }
            }
            b.addEndpoints(Endpoint.newBuilder()
                    .setId(EndpointId.newBuilder().setNamespace("ns" + ns).setPod("pod" + e))
                    .setEndpoint(WorkloadEndpoint.newBuilder()
                            .addIps(v4(localPod(e)))
                            .addIps(v6(localPod(e)))
                            .addTiers(tier)
                            .putLabels("app", "app" + (e % 5))));
        }
        return b.build();
    }

    private Policy policy() {
        Policy.Builder p = Policy.newBuilder();
        int rules = 1 + random.nextInt(4);
        for (int r = 0; r < rules; r++) {
            p.addInboundRules(rule("ingress[" + r + "]"));
        }
        if (random.nextInt(3) == 0) {
            p.addOutboundRules(rule("egress[0]"));
        }
        return p.build();
    }

    private Rule rule(String id) {
        Rule.Builder r = Rule.newBuilder().setAction(Action.ALLOW).setRuleId(id);
        int peers = random.nextInt(4); // 0 = all peers
        r.setAllPeers(peers == 0);
        for (int k = 0; k < peers; k++) {
            if (random.nextInt(5) == 0) {
                int second = random.nextInt(256);
                boolean v6 = random.nextBoolean();
                r.addPeers(Peer.newBuilder()
                        .setIpBlock(
                                v6
                                        ? IpBlock.newBuilder()
                                                .setCidr("fd00:10::/64")
                                                .addExcept("fd00:10::" + Integer.toHexString(second) + ":0/112")
                                        : IpBlock.newBuilder()
                                                .setCidr("10." + (128 + random.nextInt(3)) + ".0.0/16")
                                                .addExcept("10.128." + second + ".0/24")));
            } else {
                r.addPeers(Peer.newBuilder().setIpSetId("s" + random.nextInt(SETS)));
            }
        }
        int ports = random.nextInt(4);
        for (int k = 0; k < ports; k++) {
            switch (random.nextInt(5)) {
                case 0 ->
                    r.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(80));
                case 1 ->
                    r.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(443));
                case 2 ->
                    r.addPorts(PortMatch.newBuilder()
                            .setProtocol(Protocol.TCP)
                            .setPort(8000)
                            .setEndPort(8100));
                case 3 ->
                    r.addPorts(PortMatch.newBuilder().setProtocol(Protocol.UDP).setPort(53));
                default ->
                    r.addPorts(PortMatch.newBuilder()
                            .setProtocol(Protocol.TCP)
                            .setNamedPortIpSetId("np" + random.nextInt(20)));
            }
        }
        return r.build();
    }

    private List<PacketTuple> buildPackets(int count) {
        int[][] services = {{6, 80}, {6, 443}, {6, 8050}, {6, 8080}, {6, 8081}, {17, 53}, {6, 5432}, {1, 0}};
        List<PacketTuple> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int local = localPod(random.nextInt(LOCAL_ENDPOINTS));
            int other =
                    random.nextInt(10) == 0 ? localPod(random.nextInt(LOCAL_ENDPOINTS)) : random.nextInt(CLUSTER_PODS);
            boolean inbound = random.nextInt(4) != 0;
            boolean v6 = random.nextBoolean();
            int src = inbound ? other : local;
            int dst = inbound ? local : other;
            int[] service = services[random.nextInt(services.length)];
            out.add(new PacketTuple()
                    .set(
                            IpAddress.parse(v6 ? v6(src) : v4(src)),
                            IpAddress.parse(v6 ? v6(dst) : v4(dst)),
                            service[0] == 1 && v6 ? 58 : service[0],
                            service[1]));
        }
        return out;
    }
}
