// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
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
import io.kubeverdict.testing.tier.Tiers;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The verdict function on any snapshot and any tuple: {@link SnapshotIndex#compile} never throws
 * and counts what it cannot use as problems; {@link SnapshotIndex#decide} never throws, agrees with
 * the rule-by-rule walk, and allows a packet with no local endpoint on either side.
 *
 * <p>Input: the last byte picks the decoding. 0: the rest is a serialized NodeSnapshot
 * (regression inputs are real snapshots in this form); otherwise a snapshot is built from the
 * bytes out of a small vocabulary of ids, addresses, CIDRs and ports (valid and not), so rules
 * reference sets and policies that exist, or nearly. Tuples are the pairs of addresses the
 * snapshot mentions, with its ports and protocols, plus arbitrary ones (any family, protocol and
 * port). Regression inputs: SnapshotIndexFuzzTestInputs/anySnapshotAndTuple.
 */
@Tag(Tiers.FUZZ)
class SnapshotIndexFuzzTest {
    private static final int MAX_ADDRESSES = 12;
    private static final int MAX_PORTS = 8;
    private static final int[] PROTOCOLS = {6, 17, 132, 1, 58, 0};

    private static final String[] ADDRESSES = {
        "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.1.1", "fd00::1", "fd00::2", "fd00::1:1", "::ffff:10.0.0.1",
        "0.0.0.0", "255.255.255.255", "::", "10.0.0.256", "010.0.0.1", "10.0.0.1 ", "fd00:::1", ""
    };
    private static final String[] CIDRS = {
        "10.0.0.0/30",
        "10.0.0.0/8",
        "10.0.0.1/24",
        "0.0.0.0/0",
        "10.0.0.1/32",
        "fd00::/126",
        "fd00::/64",
        "::/0",
        "fd00::1/128",
        "10.0.0.0/33",
        "fd00::/129",
        "10.0.0.0/",
        "10.0.0.0/08",
        "/8"
    };
    private static final String[] SET_IDS = {"s0", "s1", "s2", "np0", "missing", ""};
    private static final String[] TIERS = {"admin", "default", "baseline", ""};
    private static final String[] POLICY_NAMES = {"p0", "p1", "p2", "missing"};
    private static final String[] NAMED_PROTOCOLS = {"tcp", "udp", "sctp", "TCP", "icmp", ""};
    private static final String[] NAMED_PORTS = {"80", "53", "1", "65535", "0", "65536", "080", "", "8o"};
    private static final int[] PORTS = {0, 1, 53, 79, 80, 81, 8080, 65535, 65536, 70000};

    @FuzzTest
    void anySnapshotAndTuple(FuzzedDataProvider data) {
        NodeSnapshot snapshot;
        if (data.consumeInt(0, 3) == 0) {
            try {
                snapshot = NodeSnapshot.parseFrom(data.consumeRemainingAsBytes());
            } catch (InvalidProtocolBufferException e) {
                return; // not a snapshot: nothing to compile
            }
        } else {
            snapshot = snapshot(data);
        }

        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        assertThat(index.endpointCount()).isEqualTo(snapshot.getEndpointsCount());
        assertThat(index.problems()).hasSizeLessThanOrEqualTo(Math.min(index.problemCount(), 100));
        assertThat(index.problemCount())
                .as("unusable parts counted as problems: %s", index.problems())
                .isGreaterThanOrEqualTo(certainProblems(snapshot));

        // The same snapshot reached by an update from a neighbour must decide alike.
        NodeSnapshot neighbour = neighbour(snapshot);
        SnapshotIndex updated =
                SnapshotIndex.compile(neighbour).update(neighbour, snapshot).index();
        assertThat(updated.problems()).isEqualTo(index.problems());

        Set<IpAddress> local = localAddresses(snapshot);
        PacketTuple packet = new PacketTuple();
        List<IpAddress> addresses = mentionedAddresses(snapshot);
        int[] ports = mentionedPorts(snapshot);
        int k = 0;
        for (IpAddress src : addresses) {
            for (IpAddress dst : addresses) {
                if (src.family() == dst.family()) {
                    int combination = k++;
                    packet.set(src, dst, PROTOCOLS[combination % PROTOCOLS.length], ports[combination % ports.length]);
                    check(index, packet, local);
                    assertThat(updated.decide(packet))
                            .as("updated index on %s", packet)
                            .isEqualTo(index.decide(packet));
                }
            }
        }
        for (int i = 0; i < 16 && data.remainingBytes() > 0; i++) {
            packet.family = data.consumeInt(0, 7) == 0 ? data.consumeInt() : data.consumeBoolean() ? 4 : 6;
            packet.srcHi = data.consumeLong();
            packet.srcLo = data.consumeLong();
            packet.dstHi = data.consumeLong();
            packet.dstLo = data.consumeLong();
            packet.protocol = data.consumeBoolean() ? data.pickValue(PROTOCOLS) : data.consumeInt();
            packet.dstPort = data.consumeBoolean() ? data.pickValue(ports) : data.consumeInt();
            check(index, packet, local);
            assertThat(updated.decide(packet)).as("updated index on %s", packet).isEqualTo(index.decide(packet));
        }
    }

    /**
     * The snapshot less a little of each kind (a set's last member, the last set, policy and
     * endpoint): an update from it adds all of those back.
     */
    private static NodeSnapshot neighbour(NodeSnapshot s) {
        NodeSnapshot.Builder b = s.toBuilder();
        if (b.getIpSetsCount() > 1) {
            b.removeIpSets(b.getIpSetsCount() - 1);
            IpSet first = b.getIpSets(0);
            if (first.getMembersCount() > 0) {
                List<String> members = new ArrayList<>(first.getMembersList());
                members.remove(members.size() - 1);
                b.setIpSets(0, first.toBuilder().clearMembers().addAllMembers(members));
            }
        }
        if (b.getPoliciesCount() > 1) {
            b.removePolicies(b.getPoliciesCount() - 1);
        }
        if (b.getEndpointsCount() > 1) {
            b.removeEndpoints(0);
        }
        return b.build();
    }

    // ------------------------------------------------------------------ what fuzzing found

    /**
     * A port of 2^31 or more (uint32 on the wire) was read as a negative start: the clause
     * [3205111058, 862978578] is empty, but the rule-by-rule walk matched every SCTP port, so an
     * endpoint with more than 64 rules (which always walks) allowed what the clause does not.
     */
    @Test
    void aPortAbove2To31IsNoNegativeStart() {
        PortMatch invalid = PortMatch.newBuilder()
                .setProtocol(Protocol.SCTP)
                .setPort((int) 3205111058L)
                .setEndPort(862978578)
                .build();
        List<Rule> rules = new ArrayList<>();
        for (int r = 0; r < Program.MAX_RULES; r++) {
            rules.add(Snapshots.allowNobody("egress[" + r + "]"));
        }
        rules.add(Snapshots.allow("egress[64]", List.of(), List.of(invalid)));
        NodeSnapshot snapshot = NodeSnapshot.newBuilder()
                .addPolicies(Snapshots.policy("default", "ns/p", List.of(), rules))
                .addEndpoints(Snapshots.endpoint("ns/a", List.of("10.0.0.1"), Snapshots.np(List.of(), List.of("ns/p"))))
                .build();

        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        PacketTuple packet = Snapshots.packet("10.0.0.1", "192.0.2.1", Snapshots.SCTP, 7442);
        assertThat(index.walkingSlots()).isEqualTo(1);
        assertThat(Decision.allowed(index.decide(packet))).isFalse();
        assertThat(index.problems()).anyMatch(p -> p.contains("3205111058-862978578 is invalid"));
    }

    private static void check(SnapshotIndex index, PacketTuple packet, Set<IpAddress> local) {
        int code = index.decide(packet);
        assertThat(index.decideByWalking(packet))
                .as("walk and program on %s", packet)
                .isEqualTo(code);
        boolean knownFamily = packet.family == IpAddress.V4 || packet.family == IpAddress.V6;
        if (!knownFamily || (!local.contains(normalized(packet, true)) && !local.contains(normalized(packet, false)))) {
            assertThat(Decision.index(code))
                    .as("no local endpoint in %s", packet)
                    .isEqualTo(Decision.NO_ENDPOINT);
            assertThat(Decision.allowed(code)).isTrue();
        }
    }

    /** The address as the index sees it (IPv4: low 32 bits only). */
    private static IpAddress normalized(PacketTuple p, boolean source) {
        long hi = source ? p.srcHi : p.dstHi;
        long lo = source ? p.srcLo : p.dstLo;
        return p.family == IpAddress.V4
                ? new IpAddress(IpAddress.V4, 0, lo & 0xFFFF_FFFFL)
                : new IpAddress(p.family, hi, lo);
    }

    // ------------------------------------------------------------------ what the snapshot says

    /** Problems compile must report whatever else it finds: bad endpoint addresses, bad sets, bad actions. */
    private static int certainProblems(NodeSnapshot s) {
        int n = 0;
        for (Endpoint e : s.getEndpointsList()) {
            for (String ip : e.getEndpoint().getIpsList()) {
                n += IpAddress.tryParse(ip) == null ? 1 : 0;
            }
        }
        Set<String> sets = new HashSet<>(); // the first usable set of each id
        for (IpSet set : s.getIpSetsList()) {
            if (sets.contains(set.getId())
                    || (set.getType() != IpSetType.IP && set.getType() != IpSetType.IP_AND_PORT)) {
                n++; // a duplicate, or of no known type
                continue;
            }
            sets.add(set.getId());
            if (set.getType() == IpSetType.IP) {
                for (String member : set.getMembersList()) {
                    n += IpAddress.tryParse(member) == null ? 1 : 0;
                }
            }
        }
        Set<PolicyId> policies = new HashSet<>();
        for (ActivePolicy p : s.getPoliciesList()) {
            if (!policies.add(p.getId())) {
                n++;
                continue;
            }
            for (List<Rule> rules :
                    List.of(p.getPolicy().getInboundRulesList(), p.getPolicy().getOutboundRulesList())) {
                for (Rule r : rules) {
                    n += r.getActionValue() >= 1 && r.getActionValue() <= 3 ? 0 : 1;
                }
            }
        }
        return n;
    }

    /** Addresses of local endpoints, as compile keeps them. */
    private static Set<IpAddress> localAddresses(NodeSnapshot s) {
        Set<IpAddress> local = new HashSet<>();
        for (Endpoint e : s.getEndpointsList()) {
            for (String ip : e.getEndpoint().getIpsList()) {
                IpAddress a = IpAddress.tryParse(ip);
                if (a != null) {
                    local.add(a);
                }
            }
        }
        return local;
    }

    /** Endpoint and member addresses and the edges of CIDRs, a few of each. */
    private static List<IpAddress> mentionedAddresses(NodeSnapshot s) {
        Set<IpAddress> out = new LinkedHashSet<>();
        for (Endpoint e : s.getEndpointsList()) {
            e.getEndpoint().getIpsList().forEach(ip -> add(out, IpAddress.tryParse(ip)));
        }
        for (IpSet set : s.getIpSetsList()) {
            for (String m : set.getMembersList()) {
                int comma = m.indexOf(',');
                add(out, IpAddress.tryParse(comma < 0 ? m : m.substring(0, comma)));
            }
        }
        for (ActivePolicy p : s.getPoliciesList()) {
            for (List<Rule> rules :
                    List.of(p.getPolicy().getInboundRulesList(), p.getPolicy().getOutboundRulesList())) {
                for (Rule r : rules) {
                    for (Peer peer : r.getPeersList()) {
                        List<String> cidrs = new ArrayList<>(peer.getIpBlock().getExceptList());
                        cidrs.add(peer.getIpBlock().getCidr());
                        for (String text : cidrs) {
                            Cidr c = Cidr.tryParse(text);
                            if (c != null) {
                                add(out, new IpAddress(c.family(), c.startHi(), c.startLo()));
                                add(out, new IpAddress(c.family(), c.endHi(), c.endLo()));
                            }
                        }
                    }
                }
            }
        }
        add(out, IpAddress.parse("192.0.2.1")); // somewhere else
        add(out, IpAddress.parse("2001:db8::1"));
        return new ArrayList<>(out);
    }

    private static void add(Set<IpAddress> out, IpAddress a) {
        if (a != null && out.size() < MAX_ADDRESSES) {
            out.add(a);
        }
    }

    /** The ends of numbered port clauses and their neighbours, plus the ports of named-port members. */
    private static int[] mentionedPorts(NodeSnapshot s) {
        Set<Integer> out = new LinkedHashSet<>(List.of(80));
        for (ActivePolicy p : s.getPoliciesList()) {
            for (List<Rule> rules :
                    List.of(p.getPolicy().getInboundRulesList(), p.getPolicy().getOutboundRulesList())) {
                for (Rule r : rules) {
                    for (PortMatch m : r.getPortsList()) {
                        for (int port : new int[] {m.getPort(), m.getEndPort()}) {
                            for (int near = port - 1; near <= port + 1 && out.size() < MAX_PORTS; near++) {
                                out.add(near & 0xFFFF);
                            }
                        }
                    }
                }
            }
        }
        for (IpSet set : s.getIpSetsList()) {
            for (String m : set.getMembersList()) {
                String port = m.substring(m.lastIndexOf(':') + 1);
                if (!port.isEmpty()
                        && port.length() <= 5
                        && port.chars().allMatch(c -> c >= '0' && c <= '9')
                        && out.size() < MAX_PORTS) {
                    out.add(Integer.parseInt(port) & 0xFFFF);
                }
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    // ------------------------------------------------------------------ built snapshots

    private static NodeSnapshot snapshot(FuzzedDataProvider data) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode("n");
        for (int n = data.consumeInt(0, 4); n > 0; n--) {
            IpSet.Builder set = IpSet.newBuilder().setId(data.pickValue(SET_IDS));
            int type = data.consumeInt(0, 4);
            set.setTypeValue(type <= 3 ? type : data.consumeInt());
            for (int m = data.consumeInt(0, 5); m > 0; m--) {
                set.addMembers(
                        data.consumeBoolean()
                                ? address(data)
                                : address(data) + "," + data.pickValue(NAMED_PROTOCOLS) + ":"
                                        + data.pickValue(NAMED_PORTS));
            }
            b.addIpSets(set);
        }
        for (int n = data.consumeInt(0, 4); n > 0; n--) {
            Policy.Builder policy = Policy.newBuilder();
            for (int r = data.consumeInt(0, 3); r > 0; r--) {
                Rule rule = rule(data, r);
                // Now and then one policy holds more rules than a bit-mask program: the walk decides.
                int copies = data.consumeInt(0, 15) == 0 ? 70 : 1;
                for (int c = 0; c < copies; c++) {
                    if (data.consumeBoolean()) {
                        policy.addInboundRules(rule);
                    } else {
                        policy.addOutboundRules(rule);
                    }
                }
            }
            b.addPolicies(ActivePolicy.newBuilder()
                    .setPolicy(policy)
                    .setId(PolicyId.newBuilder().setTier(data.pickValue(TIERS)).setName(data.pickValue(POLICY_NAMES))));
        }
        for (int n = data.consumeInt(0, 4); n > 0; n--) {
            WorkloadEndpoint.Builder w = WorkloadEndpoint.newBuilder();
            for (int i = data.consumeInt(0, 2); i > 0; i--) {
                w.addIps(address(data));
            }
            for (int t = data.consumeInt(0, 3); t > 0; t--) {
                TierInfo.Builder tier = TierInfo.newBuilder()
                        .setName(data.pickValue(TIERS))
                        .setDefaultActionValue(data.consumeInt(0, 4));
                for (int i = data.consumeInt(0, 2); i > 0; i--) {
                    tier.addIngressPolicies(data.pickValue(POLICY_NAMES));
                }
                for (int i = data.consumeInt(0, 2); i > 0; i--) {
                    tier.addEgressPolicies(data.pickValue(POLICY_NAMES));
                }
                w.addTiers(tier);
            }
            b.addEndpoints(Endpoint.newBuilder()
                    .setEndpoint(w)
                    .setId(EndpointId.newBuilder().setNamespace("ns").setPod("pod" + data.consumeInt(0, 3))));
        }
        return b.build();
    }

    private static Rule rule(FuzzedDataProvider data, int number) {
        Rule.Builder r = Rule.newBuilder()
                .setActionValue(data.consumeInt(0, 4))
                .setAllPeers(data.consumeBoolean())
                .setRuleId("rule[" + number + "]");
        for (int k = data.consumeInt(0, 3); k > 0; k--) {
            switch (data.consumeInt(0, 3)) {
                case 0 -> r.addPeers(Peer.newBuilder().setIpSetId(data.pickValue(SET_IDS)));
                case 1 -> r.addPeers(Peer.getDefaultInstance()); // neither kind
                default -> {
                    IpBlock.Builder block = IpBlock.newBuilder().setCidr(cidr(data));
                    for (int e = data.consumeInt(0, 2); e > 0; e--) {
                        block.addExcept(cidr(data));
                    }
                    r.addPeers(Peer.newBuilder().setIpBlock(block));
                }
            }
        }
        for (int k = data.consumeInt(0, 3); k > 0; k--) {
            if (data.consumeInt(0, 3) == 0) {
                r.addPorts(PortMatch.newBuilder()
                        .setNamedPortIpSetId(data.pickValue(SET_IDS))
                        .setProtocolValue(data.pickValue(new int[] {0, 6, 17})));
            } else {
                r.addPorts(PortMatch.newBuilder()
                        .setProtocolValue(data.consumeInt(0, 7) == 0 ? data.consumeInt() : data.pickValue(PROTOCOLS))
                        .setPort(port(data))
                        .setEndPort(data.consumeBoolean() ? 0 : port(data)));
            }
        }
        return r.build();
    }

    private static String address(FuzzedDataProvider data) {
        return data.consumeInt(0, 15) == 0 ? data.consumeString(40) : data.pickValue(ADDRESSES);
    }

    private static String cidr(FuzzedDataProvider data) {
        return data.consumeInt(0, 15) == 0 ? data.consumeString(44) : data.pickValue(CIDRS);
    }

    /** A uint32 on the wire: mostly real ports, sometimes anything (Java sees values above 2^31 as negative). */
    private static int port(FuzzedDataProvider data) {
        return data.consumeInt(0, 7) == 0 ? data.consumeInt() : data.pickValue(PORTS);
    }
}
