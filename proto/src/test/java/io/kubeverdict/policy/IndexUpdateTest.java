// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Random sequences of snapshot changes shaped like the sync stream's (set members, whole sets,
 * policies, endpoints), each followed by an {@link IndexUpdate} of the previous index and by a
 * compile from scratch: the two must give the same code for every probe packet (walked too), the
 * same explanation and the same problems; and the previous index must still decide as before
 * (copy-on-write: an update never writes what a published index reads).
 */
class IndexUpdateTest {

    private static final String[] TIERS = {"admin", "default", "baseline"};

    @Test
    void randomChangeSequencesDecideAsACompileFromScratch() {
        Random random = new Random(20261204);
        int incremental = 0;
        int full = 0;
        int probes = 0;
        int differing = 0;
        Map<String, Integer> refusals = new java.util.TreeMap<>();
        for (int run = 0; run < 30; run++) {
            NodeSnapshot snapshot = clean(random, DifferentialTest.randomSnapshot(random, run % 8 == 0));
            SnapshotIndex index = SnapshotIndex.compile(snapshot);
            for (int step = 0; step < 25; step++) {
                List<PacketTuple> packets = packets(random, 80);
                Map<String, Set<String>> learnedText = DifferentialTest.randomLearned(random, snapshot);
                int[] before = codes(index, packets, DifferentialTest.learnedView(index, learnedText));

                NodeSnapshot next = mutate(random, snapshot, run * 100 + step);
                IndexUpdate.Result result = index.update(snapshot, next);
                SnapshotIndex fresh = SnapshotIndex.compile(next);
                String where = "run " + run + " step " + step + " (" + result.summary() + ")";
                Map<String, Set<String>> nextText = DifferentialTest.randomLearned(random, next);
                int[] updatedCodes = assertSameIndex(where, result.index(), fresh, packets, nextText);
                int[] oldCodes = codes(index, packets, DifferentialTest.learnedView(index, learnedText));

                assertThat(oldCodes)
                        .as(where + ": the previous index still decides as before")
                        .isEqualTo(before);
                for (int i = 0; i < packets.size(); i++) {
                    differing += Decision.allowed(updatedCodes[i]) != Decision.allowed(before[i]) ? 1 : 0;
                }
                probes += packets.size();
                if (!result.incremental()) {
                    refusals.merge(result.summary().replaceAll("\".*\"", "..."), 1, Integer::sum);
                }
                if (result.incremental()) {
                    incremental++;
                } else {
                    full++;
                }
                snapshot = next;
                index = result.index();
            }
        }
        // The changes must matter to verdicts, and most must take the incremental path, or the
        // comparison proves little.
        assertThat(differing).as("probe verdicts a change turned").isGreaterThan(probes / 100);
        assertThat(incremental)
                .as("incremental updates (full compiles: " + refusals + ")")
                .isGreaterThan(full * 2);
        assertThat(full).as("full compiles (refused changes)").isPositive();
    }

    @Test
    void anUnchangedSnapshotKeepsEveryPart() {
        NodeSnapshot snapshot = clean(new Random(1), DifferentialTest.randomSnapshot(new Random(2), false));
        SnapshotIndex index = SnapshotIndex.compile(snapshot);

        IndexUpdate.Result result = index.update(snapshot, snapshot.toBuilder().build());

        assertThat(result.incremental()).isTrue();
        assertThat(result.summary()).isEqualTo("nothing");
        assertThat(result.index().parts.v4()).isSameAs(index.parts.v4());
        assertThat(result.index().parts.rules()).isSameAs(index.parts.rules());
        assertThat(result.index().parts.endpoints()).isSameAs(index.parts.endpoints());
    }

    @Test
    void aMemberSpelledTwoWaysIsCompiledFromScratch() {
        NodeSnapshot snapshot = Snapshots.snapshot(
                "n",
                List.of(Snapshots.ipSet("s", "fd00::1", "fd00:0::1")),
                List.of(Snapshots.allowIngressFrom("p", "s")),
                List.of(Snapshots.podEndpoint("ns", "a", "fd00::9", "p")));
        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        NodeSnapshot next = snapshot.toBuilder()
                .setIpSets(0, Snapshots.ipSet("s", "fd00:0::1"))
                .build();

        IndexUpdate.Result result = index.update(snapshot, next);

        assertThat(result.incremental()).isFalse();
        assertThat(Decision.allowed(result.index().decide(Snapshots.packet("fd00::1", "fd00::9", Snapshots.TCP, 80))))
                .as("still a member through its other spelling")
                .isTrue();
    }

    @Test
    void aSecondSpellingAddedByAnUpdateKeepsTheMemberWhenTheFirstGoes() {
        // "FD00::1" alone is usable and unaliased, so the compile follows changes of the set; an
        // update then adds the canonical "fd00::1" (the same key) and the next removes it again:
        // the address is still a member through "FD00::1", so the deny must still apply.
        NodeSnapshot snapshot = Snapshots.snapshot(
                "n",
                List.of(Snapshots.ipSet("s", "FD00::1")),
                List.of(Snapshots.policy(
                        "default",
                        "p",
                        List.of(
                                Snapshots.rule(
                                        io.kubeverdict.proto.v1.Action.DENY,
                                        "deny-s",
                                        List.of(Snapshots.set("s")),
                                        List.of()),
                                Snapshots.allow("all", List.of(Snapshots.block("::/0")), List.of())),
                        List.of())),
                List.of(Snapshots.podEndpoint("ns", "a", "fd00::9", "p")));
        PacketTuple fromMember = Snapshots.packet("fd00::1", "fd00::9", Snapshots.TCP, 80);
        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        assertThat(Decision.allowed(index.decide(fromMember))).isFalse();

        NodeSnapshot both = snapshot.toBuilder()
                .setIpSets(0, Snapshots.ipSet("s", "FD00::1", "fd00::1"))
                .build();
        IndexUpdate.Result added = index.update(snapshot, both);
        IndexUpdate.Result removed = added.index().update(both, snapshot);

        assertThat(Decision.allowed(added.index().decide(fromMember))).isFalse();
        assertThat(Decision.allowed(removed.index().decide(fromMember)))
                .as("denied: still a member through \"FD00::1\" (" + removed.summary() + ")")
                .isFalse();
        assertThat(removed.index().decide(fromMember))
                .isEqualTo(SnapshotIndex.compile(snapshot).decide(fromMember));
    }

    @Test
    void aRuleWhoseBlockCutsASegmentOfTheLineageIsSearched() {
        // 10.0.0.5 is in the table (a set member), so its entry records the segment [10.0.0.0,
        // 10.0.1.0) that the first policy's block made. The changed policy denies 10.0.0.4/30,
        // inside that segment: the updated program must search its ranges, as one array entry per
        // lineage segment would give 10.0.0.5 the answer of 10.0.0.0 (allowed).
        List<io.kubeverdict.proto.v1.IpSet> sets = List.of(Snapshots.ipSet("s", "10.0.0.5"));
        List<io.kubeverdict.proto.v1.Endpoint> endpoints = List.of(Snapshots.podEndpoint("ns", "a", "10.0.1.9", "p"));
        NodeSnapshot snapshot = Snapshots.snapshot(
                "n",
                sets,
                List.of(Snapshots.policy(
                        "default",
                        "p",
                        List.of(Snapshots.allow("net", List.of(Snapshots.block("10.0.0.0/24")), List.of())),
                        List.of())),
                endpoints);
        NodeSnapshot next = Snapshots.snapshot(
                "n",
                sets,
                List.of(Snapshots.policy(
                        "default",
                        "p",
                        List.of(
                                Snapshots.rule(
                                        io.kubeverdict.proto.v1.Action.DENY,
                                        "cut",
                                        List.of(Snapshots.block("10.0.0.4/30")),
                                        List.of()),
                                Snapshots.allow("net", List.of(Snapshots.block("10.0.0.0/24")), List.of())),
                        List.of())),
                endpoints);
        SnapshotIndex index = SnapshotIndex.compile(snapshot);

        IndexUpdate.Result result = index.update(snapshot, next);

        long member = result.index().parts.v4().get(IpAddress.parse("10.0.0.5").lo(), 0);
        assertThat(AddressEntry.segment(member))
                .as("the member's entry records a segment")
                .isLessThan(AddressEntry.NO_SEGMENT);
        assertThat(result.incremental()).as(result.summary()).isTrue();
        assertThat(result.index().parts.v4Segments()).isSameAs(index.parts.v4Segments());
        SnapshotIndex fresh = SnapshotIndex.compile(next);
        for (String from : List.of("10.0.0.5", "10.0.0.1", "10.0.0.9", "10.0.3.1", "8.8.8.8")) {
            PacketTuple p = Snapshots.packet(from, "10.0.1.9", Snapshots.TCP, 80);
            assertThat(result.index().decide(p)).as(from).isEqualTo(fresh.decide(p));
        }
        assertThat(Decision.allowed(result.index().decide(Snapshots.packet("10.0.0.5", "10.0.1.9", Snapshots.TCP, 80))))
                .as("10.0.0.5 is in the denied /30")
                .isFalse();
        assertThat(programOf(fresh).v4BlocksBySegment)
                .as("a compile numbers the new cut")
                .isNotNull();
        assertThat(programOf(result.index()).v4BlocksBySegment)
                .as("the lineage's segments do not")
                .isNull();
    }

    @Test
    void aNamedPortMemberOnAPortNoMemberHadBeforeIsProbed() {
        // The named-port table is probed only for ports some member names (NamedPorts): an update
        // that adds the first member on 9090 must make 9090 a port worth probing.
        List<io.kubeverdict.proto.v1.ActivePolicy> policies = List.of(Snapshots.policy(
                "default",
                "p",
                List.of(Snapshots.allow("named", List.of(), List.of(Snapshots.named("http")))),
                List.of()));
        List<io.kubeverdict.proto.v1.Endpoint> endpoints = List.of(Snapshots.podEndpoint("ns", "a", "10.0.0.1", "p"));
        NodeSnapshot snapshot =
                Snapshots.snapshot("n", List.of(Snapshots.namedSet("http", "10.0.0.1,tcp:80")), policies, endpoints);
        NodeSnapshot next = Snapshots.snapshot(
                "n", List.of(Snapshots.namedSet("http", "10.0.0.1,tcp:80", "10.0.0.1,tcp:9090")), policies, endpoints);
        PacketTuple to9090 = Snapshots.packet("10.0.0.2", "10.0.0.1", Snapshots.TCP, 9090);
        SnapshotIndex index = SnapshotIndex.compile(snapshot);
        assertThat(Decision.allowed(index.decide(to9090))).isFalse();

        IndexUpdate.Result result = index.update(snapshot, next);

        assertThat(result.incremental()).as(result.summary()).isTrue();
        assertThat(Decision.allowed(result.index().decide(to9090)))
                .as("9090 is now a named port of 10.0.0.1")
                .isTrue();
        assertThat(Decision.allowed(index.decide(to9090)))
                .as("the old index is not changed")
                .isFalse();
        assertThat(Decision.allowed(
                        result.index().decide(Snapshots.packet("10.0.0.2", "10.0.0.1", Snapshots.TCP, 9091))))
                .isFalse();
    }

    private static Program programOf(SnapshotIndex index) {
        return index.parts.programs().bySlot[Decision.INGRESS];
    }

    // ------------------------------------------------------------------ comparison

    private static int[] assertSameIndex(
            String where,
            SnapshotIndex updated,
            SnapshotIndex fresh,
            List<PacketTuple> packets,
            Map<String, Set<String>> learnedText) {
        assertThat(updated.problems()).as(where).isEqualTo(fresh.problems());
        assertThat(updated.problemCount()).as(where).isEqualTo(fresh.problemCount());
        assertThat(updated.endpointCount()).as(where).isEqualTo(fresh.endpointCount());
        assertThat(updated.walkingSlots()).as(where).isEqualTo(fresh.walkingSlots());
        assertThat(updated.programCount()).as(where).isEqualTo(fresh.programCount());
        assertThat(updated.domainSetCount()).as(where).isEqualTo(fresh.domainSetCount());
        for (int e = 0; e < fresh.endpointCount(); e++) {
            assertThat(updated.endpointId(e)).as(where).isEqualTo(fresh.endpointId(e));
            assertThat(updated.domainWatches(e)).as(where).isEqualTo(fresh.domainWatches(e));
        }
        LearnedAddresses learnedUpdated = DifferentialTest.learnedView(updated, learnedText);
        LearnedAddresses learnedFresh = DifferentialTest.learnedView(fresh, learnedText);
        Explainer explainUpdated = new Explainer(updated, learnedUpdated);
        Explainer explainFresh = new Explainer(fresh, learnedFresh);
        int[] codes = new int[packets.size()];
        for (int i = 0; i < packets.size(); i++) {
            PacketTuple p = packets.get(i);
            int code = fresh.decide(p, learnedFresh);
            String what = where + ": " + p + " -> " + new DecisionText(fresh).describe(code);
            codes[i] = updated.decide(p, learnedUpdated);
            assertThat(codes[i]).as(what).isEqualTo(code);
            assertThat(updated.decideByWalking(p, learnedUpdated)).as(what).isEqualTo(code);
            assertThat(explainUpdated.explain(p)).as(what).isEqualTo(explainFresh.explain(p));
        }
        return codes;
    }

    private static int[] codes(SnapshotIndex index, List<PacketTuple> packets, LearnedAddresses learned) {
        int[] codes = new int[packets.size()];
        for (int i = 0; i < codes.length; i++) {
            codes[i] = index.decide(packets.get(i), learned);
        }
        return codes;
    }

    private static List<PacketTuple> packets(Random random, int n) {
        List<PacketTuple> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean v6 = random.nextBoolean();
            int protocol = new int[] {
                        Protocol.TCP_VALUE,
                        Protocol.TCP_VALUE,
                        Protocol.UDP_VALUE,
                        Protocol.SCTP_VALUE,
                        v6 ? Protocol.ICMPV6_VALUE : Protocol.ICMP_VALUE
                    }
                    [random.nextInt(5)];
            out.add(new PacketTuple()
                    .set(
                            DifferentialTest.address(random, v6),
                            DifferentialTest.address(random, v6),
                            protocol,
                            new int[] {80, 81, 85, 8080, 53}[random.nextInt(5)]));
        }
        return out;
    }

    // ------------------------------------------------------------------ changes

    /**
     * Most generated snapshots without unusable or repeated set members, as the agent's are (either
     * makes every set change a full compile).
     */
    private static NodeSnapshot clean(Random random, NodeSnapshot s) {
        if (random.nextInt(10) == 0) {
            return s;
        }
        NodeSnapshot.Builder b = s.toBuilder();
        for (int i = 0; i < b.getIpSetsCount(); i++) {
            IpSet set = b.getIpSets(i);
            Set<String> members = new LinkedHashSet<>(set.getMembersList());
            members.remove("not-an-address");
            b.setIpSets(i, set.toBuilder().clearMembers().addAllMembers(members));
        }
        return b.build();
    }

    private static NodeSnapshot mutate(Random random, NodeSnapshot s, int serial) {
        NodeSnapshot.Builder b = s.toBuilder();
        int changes = 1 + (random.nextInt(4) == 0 ? random.nextInt(3) : 0);
        for (int c = 0; c < changes; c++) {
            int x = random.nextInt(100);
            if (x < 45) {
                changeMembers(random, b);
            } else if (x < 50) {
                addSet(random, b, serial);
            } else if (x < 53 && b.getIpSetsCount() > 0) {
                b.removeIpSets(random.nextInt(b.getIpSetsCount()));
            } else if (x < 60) {
                changePolicy(random, b, serial);
            } else if (x < 85) {
                changeEndpoint(random, b);
            } else if (x < 92) {
                addEndpoint(random, b, serial);
            } else if (x < 97 && b.getEndpointsCount() > 0) {
                b.removeEndpoints(random.nextInt(b.getEndpointsCount()));
            }
            // else: nothing (an equal snapshot)
        }
        return b.build();
    }

    private static void changeMembers(Random random, NodeSnapshot.Builder b) {
        if (b.getIpSetsCount() == 0) {
            return;
        }
        int i = random.nextInt(b.getIpSetsCount());
        IpSet set = b.getIpSets(i);
        List<String> members = new ArrayList<>(set.getMembersList());
        for (int k = random.nextInt(3); k > 0 && !members.isEmpty(); k--) {
            members.remove(random.nextInt(members.size()));
        }
        for (int k = random.nextInt(4); k > 0; k--) {
            String m = member(random, set.getType());
            if (!members.contains(m) || random.nextInt(50) == 0) {
                members.add(m);
            }
        }
        if (random.nextBoolean()) {
            members = new ArrayList<>(new TreeSet<>(members)); // as the agent's assembler renders them
        } else {
            Collections.shuffle(members, random);
        }
        b.setIpSets(i, set.toBuilder().clearMembers().addAllMembers(members));
    }

    private static String member(Random random, IpSetType type) {
        int x = random.nextInt(80);
        String address = x == 0
                ? "fd00:0:0::1:" + random.nextInt(8) // not canonical
                : x == 1 ? "not-an-address" : DifferentialTest.addressText(random, random.nextBoolean());
        if (type == IpSetType.IP_AND_PORT) {
            return address + "," + new String[] {"tcp", "udp", "sctp"}[random.nextInt(3)] + ":"
                    + new int[] {80, 81, 8080}[random.nextInt(3)];
        }
        return address;
    }

    private static void addSet(Random random, NodeSnapshot.Builder b, int serial) {
        // New sets take ids the rules name as missing, or fresh ones.
        IpSetType type = random.nextInt(4) == 0 ? IpSetType.IP_AND_PORT : IpSetType.IP;
        String id = random.nextBoolean() ? "missing" : "x" + serial;
        for (IpSet existing : b.getIpSetsList()) {
            if (existing.getId().equals(id)) {
                return;
            }
        }
        IpSet.Builder set = IpSet.newBuilder()
                .setId(id)
                .setType(random.nextInt(30) == 0 ? IpSetType.IP_SET_TYPE_UNSPECIFIED : type);
        for (String m :
                new LinkedHashSet<>(List.of(member(random, type), member(random, type), member(random, type)))) {
            set.addMembers(m);
        }
        b.addIpSets(set);
    }

    private static void changePolicy(Random random, NodeSnapshot.Builder b, int serial) {
        if (b.getPoliciesCount() == 0 || random.nextInt(5) == 0) {
            String tier = TIERS[random.nextInt(TIERS.length)];
            b.addPolicies(ActivePolicy.newBuilder()
                    .setId(PolicyId.newBuilder().setTier(tier).setName("missing"))
                    .setPolicy(randomPolicy(random)));
            return;
        }
        int i = random.nextInt(b.getPoliciesCount());
        if (random.nextInt(4) == 0) {
            b.removePolicies(i);
        } else {
            b.setPolicies(i, b.getPolicies(i).toBuilder().setPolicy(randomPolicy(random)));
        }
    }

    private static Policy randomPolicy(Random random) {
        Policy.Builder p = Policy.newBuilder();
        for (int r = random.nextInt(4); r > 0; r--) {
            p.addInboundRules(DifferentialTest.randomRule(random, "ingress[" + r + "]"));
        }
        for (int r = random.nextInt(3); r > 0; r--) {
            p.addOutboundRules(DifferentialTest.randomRule(random, "egress[" + r + "]"));
        }
        return p.build();
    }

    private static void changeEndpoint(Random random, NodeSnapshot.Builder b) {
        if (b.getEndpointsCount() == 0) {
            return;
        }
        int i = random.nextInt(b.getEndpointsCount());
        Endpoint e = b.getEndpoints(i);
        WorkloadEndpoint.Builder w = e.getEndpoint().toBuilder();
        switch (random.nextInt(4)) {
            case 0 -> w.clearIps().addAllIps(ips(random));
            case 1 -> w.clearTiers().addAllTiers(tiers(random));
            case 2 -> w.putLabels("app", "v" + random.nextInt(3)); // changes nothing the index reads
            default -> {
                w.clearIps().addAllIps(ips(random));
                w.clearTiers().addAllTiers(tiers(random));
            }
        }
        b.setEndpoints(i, e.toBuilder().setEndpoint(w));
    }

    private static void addEndpoint(Random random, NodeSnapshot.Builder b, int serial) {
        Endpoint e = Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace("ns").setPod("new" + serial))
                .setEndpoint(
                        WorkloadEndpoint.newBuilder().addAllIps(ips(random)).addAllTiers(tiers(random)))
                .build();
        // Endpoints are ordered in the agent's snapshots; a new one may land anywhere.
        b.addEndpoints(random.nextInt(b.getEndpointsCount() + 1), e);
    }

    private static List<String> ips(Random random) {
        List<String> ips = new ArrayList<>();
        int subnet = random.nextInt(2);
        int host = random.nextInt(8);
        if (random.nextInt(4) != 0) {
            ips.add("10.0." + subnet + "." + host);
        }
        if (random.nextInt(4) != 0) {
            ips.add("fd00::" + subnet + ":" + host);
        }
        return ips;
    }

    private static List<TierInfo> tiers(Random random) {
        List<TierInfo> tiers = new ArrayList<>();
        for (int t = 0; t < TIERS.length; t++) {
            if (random.nextInt(3) == 0) {
                continue;
            }
            TierInfo.Builder tier = TierInfo.newBuilder()
                    .setName(TIERS[t])
                    .setDefaultAction(DifferentialTest.randomAction(random, t == 1));
            for (int k = random.nextInt(4); k > 0; k--) {
                tier.addIngressPolicies(random.nextInt(8) == 0 ? "missing" : "p" + random.nextInt(6));
            }
            for (int k = random.nextInt(3); k > 0; k--) {
                tier.addEgressPolicies(random.nextInt(8) == 0 ? "missing" : "p" + random.nextInt(6));
            }
            tiers.add(tier.build());
        }
        return tiers;
    }
}
