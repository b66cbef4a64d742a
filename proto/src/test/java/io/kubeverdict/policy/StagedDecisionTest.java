// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.port;
import static io.kubeverdict.policy.Snapshots.rule;
import static io.kubeverdict.policy.Snapshots.tier;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Verdict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The would-be decision under staged tiers: added and replacing policies, admin-tier PASS, attribution. */
class StagedDecisionTest {

    static final String WEB = "10.1.0.1";
    static final String OPEN = "10.1.0.2";
    static final String CLIENT = "10.9.0.9";
    static final String OPS = "10.77.0.5";
    static final String BAD = "10.66.0.5";

    /** Live: web isolated by t/allow-web (TCP 80), admin passes ops and denies bad; open not isolated. */
    static NodeSnapshot.Builder live() {
        return NodeSnapshot.newBuilder()
                .setNode("n1")
                .addPolicies(policy(
                        "admin",
                        "anp:pass-ops",
                        List.of(rule(Action.PASS, "ingress[0]", List.of(block("10.77.0.0/16")), List.of())),
                        List.of()))
                .addPolicies(policy(
                        "admin",
                        "anp:deny-bad",
                        List.of(rule(Action.DENY, "ingress[0]", List.of(block("10.66.0.0/16")), List.of())),
                        List.of()))
                .addPolicies(policy(
                        "default",
                        "t/allow-web",
                        List.of(allow("ingress[0]", List.of(), List.of(port(Protocol.TCP, 80)))),
                        List.of()))
                .addEndpoints(endpoint(
                        "t/web",
                        List.of(WEB),
                        adminTier("anp:pass-ops", "anp:deny-bad"),
                        np(List.of("t/allow-web"), List.of())))
                .addEndpoints(endpoint("t/open", List.of(OPEN)));
    }

    static TierInfo adminTier(String... ingress) {
        return tier("admin", Action.PASS, List.of(ingress), List.of());
    }

    static Endpoint withStaged(Endpoint e, TierInfo... staged) {
        return e.toBuilder()
                .setEndpoint(e.getEndpoint().toBuilder().addAllStagedTiers(List.of(staged)))
                .build();
    }

    /** The snapshot with endpoint i given staged tiers. */
    static NodeSnapshot staged(NodeSnapshot.Builder b, int endpoint, TierInfo... tiers) {
        return b.setEndpoints(endpoint, withStaged(b.getEndpoints(endpoint), tiers))
                .build();
    }

    static final io.kubeverdict.proto.v1.ActivePolicy STAGED_DENY_ALL =
            policy("default", "staged:t/deny-all", List.of(), List.of());

    @Test
    void nothingStagedIsNeverAsked() {
        SnapshotIndex index = SnapshotIndex.compile(live().build());
        assertThat(index.hasStaged()).isFalse();
        assertThat(index.decideStaged(packet(CLIENT, WEB, TCP, 80), LearnedAddresses.NONE))
                .isEqualTo(Decision.NOT_STAGED);
    }

    @Test
    void anAddedDenyAllFlipsAnOpenEndpointAndIsNamed() {
        NodeSnapshot s = staged(live().addPolicies(STAGED_DENY_ALL), 1, np(List.of("staged:t/deny-all"), List.of()));
        SnapshotIndex index = SnapshotIndex.compile(s);
        PacketTuple p = packet(CLIENT, OPEN, TCP, 80);

        assertThat(Decision.allowed(index.decide(p))).isTrue();
        int staged = index.decideStaged(p, LearnedAddresses.NONE);
        assertThat(Decision.allowed(staged)).isFalse();
        StagedVerdict v = new StagedText(index).verdict(staged, p);
        assertThat(v.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(v.getStagedPolicy()).isEqualTo(id("default", "t/deny-all"));
        assertThat(v.getRuleId()).isEmpty(); // the tier default decides a deny-all
        assertThat(v.hasDecidingPolicy()).isFalse();
        assertThat(v.getDirection()).isEqualTo("ingress");
        // open's egress is as live (the deny-all is for ingress): nothing staged for what it sends
        assertThat(index.decideStaged(packet(OPEN, CLIENT, TCP, 80), LearnedAddresses.NONE))
                .isEqualTo(Decision.NOT_STAGED);
        // web has no staged tiers: nothing to ask
        assertThat(index.decideStaged(packet(CLIENT, WEB, TCP, 80), LearnedAddresses.NONE))
                .isEqualTo(Decision.NOT_STAGED);
    }

    @Test
    void anAddedNetworkPolicyIsAUnionWithTheLiveOnes() {
        NodeSnapshot s = staged(
                live().addPolicies(STAGED_DENY_ALL),
                0,
                adminTier("anp:pass-ops", "anp:deny-bad"),
                np(List.of("staged:t/deny-all", "t/allow-web"), List.of()));
        SnapshotIndex index = SnapshotIndex.compile(s);
        // allow-web still allows 80 next to a deny-all: NetworkPolicies add up
        assertThat(Decision.allowed(index.decideStaged(packet(CLIENT, WEB, TCP, 80), LearnedAddresses.NONE)))
                .isTrue();
        assertThat(Decision.allowed(index.decideStaged(packet(CLIENT, WEB, TCP, 81), LearnedAddresses.NONE)))
                .isFalse();
    }

    @Test
    void aReplacingPolicyTakesTheLiveOnesPlace() {
        NodeSnapshot s = staged(
                live().addPolicies(policy(
                        "default",
                        "staged:t/allow-web",
                        List.of(allow("ingress[0]", List.of(), List.of(port(Protocol.TCP, 8080)))),
                        List.of())),
                0,
                adminTier("anp:pass-ops", "anp:deny-bad"),
                np(List.of("staged:t/allow-web"), List.of()));
        SnapshotIndex index = SnapshotIndex.compile(s);
        StagedText text = new StagedText(index);

        PacketTuple old = packet(CLIENT, WEB, TCP, 80);
        assertThat(Decision.allowed(index.decide(old))).isTrue();
        int wouldDeny = index.decideStaged(old, LearnedAddresses.NONE);
        assertThat(Decision.allowed(wouldDeny)).isFalse();
        assertThat(text.verdict(wouldDeny, old).getStagedPolicy()).isEqualTo(id("default", "t/allow-web"));

        PacketTuple next = packet(CLIENT, WEB, TCP, 8080);
        assertThat(Decision.allowed(index.decide(next))).isFalse();
        int wouldAllow = index.decideStaged(next, LearnedAddresses.NONE);
        StagedVerdict v = text.verdict(wouldAllow, next);
        assertThat(v.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(v.getStagedPolicy()).isEqualTo(id("default", "t/allow-web"));
        assertThat(v.getRuleId()).isEqualTo("ingress[0]");
        assertThat(v.getReason()).isEqualTo("allowed by default/staged:t/allow-web ingress[0]");
    }

    @Test
    void aStagedAdminDenyBeforeAPassDecidesWhatThePassLeftToTheNextTier() {
        NodeSnapshot s = staged(
                live().addPolicies(policy(
                        "admin",
                        "staged:anp:deny-ops",
                        List.of(rule(Action.DENY, "ingress[0]", List.of(block("10.77.0.0/16")), List.of())),
                        List.of())),
                0,
                adminTier("staged:anp:deny-ops", "anp:pass-ops", "anp:deny-bad"),
                np(List.of("t/allow-web"), List.of()));
        SnapshotIndex index = SnapshotIndex.compile(s);
        PacketTuple p = packet(OPS, WEB, TCP, 80);
        assertThat(Decision.allowed(index.decide(p))).isTrue(); // passed, then allowed by allow-web
        int staged = index.decideStaged(p, LearnedAddresses.NONE);
        assertThat(Decision.allowed(staged)).isFalse();
        StagedVerdict v = new StagedText(index).verdict(staged, p);
        assertThat(v.getStagedPolicy()).isEqualTo(id("admin", "anp:deny-ops"));
        assertThat(v.getRuleId()).isEqualTo("ingress[0]");
    }

    @Test
    void aStagedPassReplacingAnAdminDenyLetsTheNextTierDecide() {
        NodeSnapshot s = staged(
                live().addPolicies(policy(
                        "admin",
                        "staged:anp:deny-bad",
                        List.of(rule(Action.PASS, "ingress[0]", List.of(block("10.66.0.0/16")), List.of())),
                        List.of())),
                0,
                adminTier("anp:pass-ops", "staged:anp:deny-bad"),
                np(List.of("t/allow-web"), List.of()));
        SnapshotIndex index = SnapshotIndex.compile(s);
        PacketTuple p = packet(BAD, WEB, TCP, 80);
        assertThat(Decision.allowed(index.decide(p))).isFalse();
        int staged = index.decideStaged(p, LearnedAddresses.NONE);
        assertThat(Decision.allowed(staged)).isTrue();
        StagedVerdict v = new StagedText(index).verdict(staged, p);
        // a live rule decides now; the difference is the staged policy's, which passed
        assertThat(v.getStagedPolicy()).isEqualTo(id("admin", "anp:deny-bad"));
        assertThat(v.getDecidingPolicy()).isEqualTo(id("default", "t/allow-web"));
        assertThat(v.getRuleId()).isEqualTo("ingress[0]");
        // and off port 80 the NetworkPolicy tier's default denies as before: no difference
        assertThat(Decision.allowed(index.decideStaged(packet(BAD, WEB, TCP, 81), LearnedAddresses.NONE)))
                .isFalse();
    }

    @Test
    void stagedPartsNeverChangeTheEnforcedDecision() {
        NodeSnapshot liveOnly = live().build();
        NodeSnapshot s = staged(
                live().addPolicies(STAGED_DENY_ALL),
                0,
                adminTier("anp:pass-ops"),
                np(List.of("staged:t/deny-all"), List.of()));
        SnapshotIndex plain = SnapshotIndex.compile(liveOnly);
        SnapshotIndex withStaged = SnapshotIndex.compile(s);
        SnapshotIndex updated = plain.update(liveOnly, s).index();
        for (String src : List.of(CLIENT, OPS, BAD, OPEN)) {
            for (int port : new int[] {80, 81, 8080}) {
                PacketTuple p = packet(src, WEB, TCP, port);
                assertThat(Decision.allowed(withStaged.decide(p)))
                        .as("%s -> web:%d", src, port)
                        .isEqualTo(Decision.allowed(plain.decide(p)));
                assertThat(updated.decideStaged(p, LearnedAddresses.NONE))
                        .as("update equals compile for %s -> web:%d", src, port)
                        .isEqualTo(withStaged.decideStaged(p, LearnedAddresses.NONE));
                assertThat(Decision.allowed(withStaged.decideStaged(p, LearnedAddresses.NONE)))
                        .as("%s -> web:%d staged", src, port)
                        .isFalse();
            }
        }
    }

    /**
     * On the synthetic node (admin tiers, 110 endpoints, programs): decideStaged of would-be tiers
     * equals decide of a snapshot that enforces those tiers, for every packet.
     */
    @Test
    void theWouldBeDecisionIsTheDecisionOfTheWouldBeTiersEnforced() {
        SyntheticCluster cluster = new SyntheticCluster(7, 2048, true);
        NodeSnapshot.Builder staged = cluster.snapshot.toBuilder();
        NodeSnapshot.Builder enforced = cluster.snapshot.toBuilder();
        // every other endpoint, in turn: its first tier dropped; only that tier's egress policies dropped
        // (one direction staged, the other as live); that tier's default changed (the same rules: the
        // packet is matched once for both walks)
        for (int i = 0; i < staged.getEndpointsCount(); i += 2) {
            List<TierInfo> tiers = staged.getEndpoints(i).getEndpoint().getTiersList();
            List<TierInfo> wouldBe = tiers.size() > 1 ? tiers.subList(1, tiers.size()) : tiers;
            if (i % 6 == 2 && !tiers.isEmpty()) {
                wouldBe = new ArrayList<>(tiers);
                wouldBe.set(0, tiers.get(0).toBuilder().clearEgressPolicies().build());
            } else if (i % 6 == 4 && !tiers.isEmpty()) {
                wouldBe = new ArrayList<>(tiers);
                Action other = tiers.get(0).getDefaultAction() == Action.DENY ? Action.ALLOW : Action.DENY;
                wouldBe.set(0, tiers.get(0).toBuilder().setDefaultAction(other).build());
            }
            staged.setEndpoints(i, withStaged(staged.getEndpoints(i), wouldBe.toArray(new TierInfo[0])));
            Endpoint e = enforced.getEndpoints(i);
            enforced.setEndpoints(
                    i,
                    e.toBuilder()
                            .setEndpoint(
                                    e.getEndpoint().toBuilder().clearTiers().addAllTiers(wouldBe)));
        }
        SnapshotIndex withStaged = SnapshotIndex.compile(staged.build());
        SnapshotIndex wouldBeEnforced = SnapshotIndex.compile(enforced.build());
        DecisionText stagedText = new DecisionText(withStaged);
        DecisionText enforcedText = new DecisionText(wouldBeEnforced);
        int asked = 0;
        for (PacketTuple p : cluster.packets) {
            long both = withStaged.decideWithStaged(p, LearnedAddresses.NONE);
            assertThat(Decision.enforced(both))
                    .as("the fused pass's enforced code is decide's, %s", p)
                    .isEqualTo(withStaged.decide(p));
            int code = withStaged.decideStaged(p, LearnedAddresses.NONE);
            assertThat(Decision.staged(both))
                    .as("and its would-be code decideStaged's")
                    .isEqualTo(code);
            if (code == Decision.NOT_STAGED) {
                // no direction of the packet is staged: its would-be decision is its enforced one
                assertThat(stagedText.describe(withStaged.decide(p)))
                        .as("%s", p)
                        .isEqualTo(enforcedText.describe(wouldBeEnforced.decide(p)));
                continue;
            }
            asked++;
            // codes number tier names per index: compare what they say
            assertThat(stagedText.describe(code))
                    .as("%s", p)
                    .isEqualTo(enforcedText.describe(wouldBeEnforced.decide(p)));
        }
        assertThat(asked).as("packets of endpoints with would-be tiers").isGreaterThan(500);
    }

    private static PolicyId id(String tier, String name) {
        return PolicyId.newBuilder().setTier(tier).setName(name).build();
    }
}
