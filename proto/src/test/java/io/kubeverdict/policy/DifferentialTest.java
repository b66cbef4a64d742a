// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
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
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Thousands of random snapshots and packets: the bit-mask programs, the rule-by-rule walk, the
 * explain path and a deliberately naive transcription of policy.proto must agree on every packet
 * (and the two fast paths on what decided).
 */
class DifferentialTest {

    private static final String[] TIERS = {"admin", "default", "baseline"};
    private static final String[] SERVICES_PROTO = {"tcp", "udp", "sctp"};
    private static final String[] DOMAIN_SETS = {"d:a", "d:b"};

    @Test
    void fastPathsAgreeWithTheReference() {
        Random random = new Random(20261130);
        int packets = 0;
        int allowed = 0;
        int walked = 0;
        for (int round = 0; round < 300; round++) {
            NodeSnapshot snapshot = randomSnapshot(random, round % 10 == 0);
            SnapshotIndex index = SnapshotIndex.compile(snapshot);
            Map<String, Set<String>> learnedText = randomLearned(random, snapshot);
            LearnedAddresses learned = learnedView(index, learnedText);
            ReferenceEvaluator reference = new ReferenceEvaluator(snapshot, learnedText);
            DecisionText text = new DecisionText(index);
            Explainer explainer = new Explainer(index, learned);
            walked += index.walkingSlots() > 0 ? 1 : 0;
            for (int i = 0; i < 200; i++) {
                boolean v6 = random.nextBoolean();
                IpAddress src = address(random, v6);
                IpAddress dst = address(random, v6);
                int protocol = new int[] {
                            Protocol.TCP_VALUE,
                            Protocol.TCP_VALUE,
                            Protocol.UDP_VALUE,
                            Protocol.SCTP_VALUE,
                            v6 ? Protocol.ICMPV6_VALUE : Protocol.ICMP_VALUE
                        }
                        [random.nextInt(5)];
                int port = new int[] {80, 81, 85, 8080, 53}[random.nextInt(5)];
                PacketTuple packet = new PacketTuple().set(src, dst, protocol, port);

                boolean expected = reference.allowed(src, dst, protocol, port);
                int code = index.decide(packet, learned);
                String what = "round " + round + ": " + packet + " -> " + text.describe(code);
                assertThat(Decision.allowed(code)).as(what).isEqualTo(expected);
                assertThat(index.decideByWalking(packet, learned)).as(what).isEqualTo(code);
                learnedDecided += Decision.allowed(code) != Decision.allowed(index.decide(packet)) ? 1 : 0;
                assertThat(explainer.explain(packet).getVerdict())
                        .as(what)
                        .isEqualTo(expected ? Verdict.VERDICT_ALLOW : Verdict.VERDICT_DENY);
                packets++;
                allowed += expected ? 1 : 0;
            }
        }
        // The generator must exercise both outcomes substantially, or the comparison proves little.
        assertThat(allowed).isBetween(packets / 5, packets * 4 / 5);
        assertThat(walked).isPositive(); // some snapshots exceed 64 rules per endpoint
        assertThat(learnedDecided).as("packets decided by a learned address").isPositive();
    }

    private int learnedDecided;

    /** Per endpoint and domain set: a few random addresses "learned" (the reference's strings). */
    static Map<String, Set<String>> randomLearned(Random random, NodeSnapshot snapshot) {
        Map<String, Set<String>> learned = new HashMap<>();
        for (Endpoint e : snapshot.getEndpointsList()) {
            for (String set : DOMAIN_SETS) {
                Set<String> addresses = new HashSet<>();
                for (int k = 0; k < random.nextInt(6); k++) {
                    addresses.add(addressText(random, random.nextBoolean()));
                }
                learned.put(e.getId().getNamespace() + "/" + e.getId().getPod() + " " + set, addresses);
            }
        }
        return learned;
    }

    /** The same learned addresses through the index's numbers, as the agent keeps them. */
    static LearnedAddresses learnedView(SnapshotIndex index, Map<String, Set<String>> text) {
        return (endpoint, domainSet, family, hi, lo) -> {
            EndpointId id = index.endpointId(endpoint);
            String address = (family == IpAddress.V4 ? IpAddress.v4((int) lo) : IpAddress.v6(hi, lo)).toString();
            return text.getOrDefault(
                            id.getNamespace() + "/" + id.getPod() + " " + index.domainSetId(domainSet), Set.of())
                    .contains(address);
        };
    }

    static IpAddress address(Random random, boolean v6) {
        if (random.nextInt(8) == 0) {
            return IpAddress.parse(v6 ? "2001:db8::1" : "8.8.8.8");
        }
        int subnet = random.nextInt(2);
        int host = random.nextInt(8);
        return IpAddress.parse(v6 ? "fd00::" + subnet + ":" + host : "10.0." + subnet + "." + host);
    }

    static String addressText(Random random, boolean v6) {
        return address(random, v6).toString();
    }

    static NodeSnapshot randomSnapshot(Random random, boolean bigPolicies) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode("n");
        List<String> ipSets = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            IpSet.Builder set = IpSet.newBuilder().setId("s" + s).setType(IpSetType.IP);
            for (int m = 0; m < random.nextInt(20); m++) {
                set.addMembers(addressText(random, random.nextBoolean()));
            }
            if (random.nextInt(10) == 0) {
                set.addMembers("not-an-address");
            }
            b.addIpSets(set);
            ipSets.add("s" + s);
        }
        for (int s = 0; s < 3; s++) {
            IpSet.Builder set = IpSet.newBuilder().setId("np" + s).setType(IpSetType.IP_AND_PORT);
            for (int m = 0; m < random.nextInt(20); m++) {
                set.addMembers(addressText(random, random.nextBoolean()) + "," + SERVICES_PROTO[random.nextInt(3)] + ":"
                        + new int[] {80, 81, 8080}[random.nextInt(3)]);
            }
            b.addIpSets(set);
        }
        List<List<String>> policyNames = new ArrayList<>();
        for (String tier : TIERS) {
            List<String> names = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                String name = "p" + p;
                names.add(name);
                Policy.Builder policy = Policy.newBuilder();
                int ruleCount = bigPolicies && p == 0 ? 70 : random.nextInt(4);
                for (int r = 0; r < ruleCount; r++) {
                    policy.addInboundRules(randomRule(random, "ingress[" + r + "]"));
                }
                for (int r = 0; r < random.nextInt(4); r++) {
                    policy.addOutboundRules(randomRule(random, "egress[" + r + "]"));
                }
                b.addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                        .setPolicy(policy));
            }
            names.add("missing");
            policyNames.add(names);
        }
        for (int e = 0; e < 10; e++) {
            WorkloadEndpoint.Builder w = WorkloadEndpoint.newBuilder();
            int subnet = random.nextInt(2);
            int host = random.nextInt(8);
            if (random.nextInt(4) != 0) {
                w.addIps("10.0." + subnet + "." + host);
            }
            if (random.nextInt(4) != 0) {
                w.addIps("fd00::" + subnet + ":" + host);
            }
            for (int t = 0; t < TIERS.length; t++) {
                if (random.nextInt(3) == 0) {
                    continue;
                }
                TierInfo.Builder tier =
                        TierInfo.newBuilder().setName(TIERS[t]).setDefaultAction(randomAction(random, t == 1));
                for (int k = 0; k < random.nextInt(4); k++) {
                    tier.addIngressPolicies(policyNames
                            .get(t)
                            .get(random.nextInt(policyNames.get(t).size())));
                }
                for (int k = 0; k < random.nextInt(3); k++) {
                    tier.addEgressPolicies(policyNames
                            .get(t)
                            .get(random.nextInt(policyNames.get(t).size())));
                }
                w.addTiers(tier);
            }
            b.addEndpoints(Endpoint.newBuilder()
                    .setId(EndpointId.newBuilder().setNamespace("ns").setPod("pod" + e))
                    .setEndpoint(w));
        }
        return b.build();
    }

    static Action randomAction(Random random, boolean networkPolicyTier) {
        int x = random.nextInt(20);
        if (x == 0) {
            return Action.ACTION_UNSPECIFIED;
        }
        if (networkPolicyTier) {
            return x < 17 ? Action.DENY : Action.ALLOW;
        }
        return x < 12 ? Action.PASS : x < 16 ? Action.ALLOW : Action.DENY;
    }

    static Rule randomRule(Random random, String id) {
        int x = random.nextInt(20);
        Action action = x < 13 ? Action.ALLOW : x < 16 ? Action.DENY : x < 19 ? Action.PASS : Action.ACTION_UNSPECIFIED;
        Rule.Builder rule = Rule.newBuilder().setAction(action).setRuleId(id);
        int peers = random.nextInt(4);
        rule.setAllPeers(peers == 0 ? random.nextInt(5) != 0 : random.nextInt(5) == 0);
        for (int k = 0; k < peers; k++) {
            switch (random.nextInt(7)) {
                case 0, 1 -> rule.addPeers(Peer.newBuilder().setIpSetId("s" + random.nextInt(6)));
                case 6 -> {
                    int d = random.nextInt(DOMAIN_SETS.length);
                    DomainNames.Builder names = DomainNames.newBuilder()
                            .setLearnedSetId(DOMAIN_SETS[d])
                            .addPatterns(d == 0 ? "api.test" : "*.svc.test");
                    if (random.nextInt(20) == 0) {
                        names.clearPatterns(); // unusable: matches nothing
                    }
                    rule.addPeers(Peer.newBuilder().setDomainNames(names));
                }
                case 2 -> rule.addPeers(Peer.newBuilder().setIpSetId(random.nextBoolean() ? "missing" : "np0"));
                default -> {
                    boolean v6 = random.nextBoolean();
                    IpBlock.Builder block = IpBlock.newBuilder();
                    block.setCidr(
                            random.nextInt(30) == 0
                                    ? "10.0.0.0/99"
                                    : v6
                                            ? "fd00::" + random.nextInt(4) + ":0/" + (108 + random.nextInt(21))
                                            : "10.0." + random.nextInt(4) + ".0/" + (22 + random.nextInt(11)));
                    for (int e = 0; e < random.nextInt(3); e++) {
                        block.addExcept(
                                random.nextInt(30) == 0
                                        ? "bad"
                                        : addressText(random, random.nextBoolean()) + "/"
                                                + (random.nextBoolean() ? (v6 ? 126 : 30) : (v6 ? 128 : 32)));
                    }
                    rule.addPeers(Peer.newBuilder().setIpBlock(block));
                }
            }
        }
        for (int k = 0; k < random.nextInt(4); k++) {
            PortMatch.Builder pm = PortMatch.newBuilder();
            if (random.nextInt(4) == 0) {
                pm.setNamedPortIpSetId(random.nextInt(6) == 0 ? "s0" : "np" + random.nextInt(3));
            } else {
                int p = random.nextInt(12);
                pm.setProtocol(
                        p == 0
                                ? Protocol.PROTOCOL_UNSPECIFIED
                                : p < 7 ? Protocol.TCP : p < 10 ? Protocol.UDP : Protocol.SCTP);
                pm.setPort(new int[] {0, 80, 81, 8080, 70000}[random.nextInt(random.nextInt(12) == 0 ? 5 : 4)]);
                pm.setEndPort(new int[] {0, 0, 0, 85, 79, 70000}[random.nextInt(6)]);
            }
            rule.addPorts(pm);
        }
        return rule.build();
    }
}
