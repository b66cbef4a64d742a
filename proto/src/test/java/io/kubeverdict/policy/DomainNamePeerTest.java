// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.TCP;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.endpoint;
import static io.kubeverdict.policy.Snapshots.packet;
import static io.kubeverdict.policy.Snapshots.policy;
import static io.kubeverdict.policy.Snapshots.port;
import static io.kubeverdict.policy.Snapshots.rule;
import static io.kubeverdict.policy.Snapshots.tier;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Verdict;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Domain-name peers: a destination matches when the source endpoint learned it for that set. */
class DomainNamePeerTest {

    static final DomainNames API = DomainNames.newBuilder()
            .addPatterns("api.test")
            .setLearnedSetId("d:api")
            .build();
    static final Peer API_PEER = Peer.newBuilder().setDomainNames(API).build();

    static Endpoint watching(String name, String ip) {
        Endpoint e = endpoint(
                name,
                List.of(ip),
                tier("admin", Action.PASS, List.of(), List.of("allow-api")),
                tier("baseline", Action.ALLOW, List.of(), List.of("deny-all-egress")));
        return e.toBuilder()
                .setEndpoint(e.getEndpoint().toBuilder().addDomainWatches(API))
                .build();
    }

    static final NodeSnapshot SNAPSHOT = NodeSnapshot.newBuilder()
            .setNode("n1")
            .addPolicies(policy(
                    "admin",
                    "allow-api",
                    List.of(rule(Action.ALLOW, "ingress[0]", List.of(API_PEER), List.of())),
                    List.of(allow("egress[0] (api)", List.of(API_PEER), List.of(port(Protocol.TCP, 443))))))
            .addPolicies(policy(
                    "baseline",
                    "deny-all-egress",
                    List.of(),
                    List.of(rule(Action.DENY, "egress[0]", List.of(), List.of()))))
            .addEndpoints(watching("t/a", "10.1.0.1"))
            .addEndpoints(watching("t/b", "10.1.0.2"))
            .build();

    static final SnapshotIndex INDEX = SnapshotIndex.compile(SNAPSHOT);

    /** t/a learned 192.0.2.10 for d:api; t/b learned nothing. */
    static final LearnedAddresses LEARNED = (endpoint, set, family, hi, lo) ->
            INDEX.endpointId(endpoint).getPod().equals("a")
                    && INDEX.domainSetId(set).equals("d:api")
                    && family == IpAddress.V4
                    && lo == (IpAddress.parse("192.0.2.10").lo());

    @Test
    void aLearnedAddressIsAllowedForTheEndpointThatLearnedItOnly() {
        assertThat(Decision.allowed(INDEX.decide(packet("10.1.0.1", "192.0.2.10", TCP, 443), LEARNED)))
                .isTrue();
        assertThat(Decision.allowed(INDEX.decideByWalking(packet("10.1.0.1", "192.0.2.10", TCP, 443), LEARNED)))
                .isTrue();
        // the rule's ports still apply
        assertThat(Decision.allowed(INDEX.decide(packet("10.1.0.1", "192.0.2.10", TCP, 80), LEARNED)))
                .isFalse();
        // another address, another endpoint (same program), or nothing learned: the baseline denies
        assertThat(Decision.allowed(INDEX.decide(packet("10.1.0.1", "192.0.2.11", TCP, 443), LEARNED)))
                .isFalse();
        assertThat(Decision.allowed(INDEX.decide(packet("10.1.0.2", "192.0.2.10", TCP, 443), LEARNED)))
                .isFalse();
        assertThat(Decision.allowed(INDEX.decide(packet("10.1.0.1", "192.0.2.10", TCP, 443))))
                .isFalse();
    }

    @Test
    void explanationsNameTheDomainRuleWhenLearned() {
        var explained = new Explainer(INDEX, LEARNED).explain(Snapshots.tuple("10.1.0.1", "192.0.2.10", TCP, 443));
        assertThat(explained.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(explained.getEgress().getRuleId()).isEqualTo("egress[0] (api)");
        assertThat(new Explainer(INDEX)
                        .explain(Snapshots.tuple("10.1.0.1", "192.0.2.10", TCP, 443))
                        .getVerdict())
                .isEqualTo(Verdict.VERDICT_DENY);
    }

    @Test
    void explanationsNameTheDomainWhoseAnswerTaughtTheAddress() {
        LearnedAddresses named = new LearnedAddresses() {
            @Override
            public boolean contains(int endpoint, int set, int family, long hi, long lo) {
                return LEARNED.contains(endpoint, set, family, hi, lo);
            }

            @Override
            public String nameOf(int endpoint, int set, int family, long hi, long lo) {
                return contains(endpoint, set, family, hi, lo) ? "api.test" : null;
            }
        };
        var egress = new Explainer(INDEX, named)
                .explain(Snapshots.tuple("10.1.0.1", "192.0.2.10", TCP, 443))
                .getEgress();
        assertThat(egress.getLearnedDomain()).isEqualTo("api.test");
        assertThat(egress.getReason()).endsWith("(destination learned from the DNS answer for api.test)");
        // a denied connection, or one allowed without a learned address, names no domain
        assertThat(new Explainer(INDEX, named)
                        .explain(Snapshots.tuple("10.1.0.1", "192.0.2.11", TCP, 443))
                        .getEgress()
                        .getLearnedDomain())
                .isEmpty();
        assertThat(new Explainer(INDEX, LEARNED)
                        .explain(Snapshots.tuple("10.1.0.1", "192.0.2.10", TCP, 443))
                        .getEgress()
                        .getLearnedDomain())
                .isEmpty();
    }

    @Test
    void watchesAndPatternsAreExposedForTheAgent() {
        assertThat(INDEX.domainSetCount()).isEqualTo(1);
        assertThat(INDEX.domainPatterns(0)).containsExactly("api.test");
        int a = INDEX.endpointAt(IpAddress.V4, 0, IpAddress.parse("10.1.0.1").lo());
        assertThat(INDEX.endpointId(a).getPod()).isEqualTo("a");
        assertThat(INDEX.domainWatches(a)).containsExactly(0);
    }

    @Test
    void aDomainPeerInAnInboundRuleOrWithoutPatternsMatchesNothingAndIsReported() {
        assertThat(INDEX.problems())
                .anyMatch(p -> p.contains("domain-name peer in an inbound rule; it matches nothing"));
        NodeSnapshot broken = SNAPSHOT.toBuilder()
                .setPolicies(
                        0,
                        policy(
                                "admin",
                                "allow-api",
                                List.of(),
                                List.of(allow(
                                        "egress[0]",
                                        List.of(Peer.newBuilder()
                                                .setDomainNames(
                                                        DomainNames.newBuilder().setLearnedSetId("d:x"))
                                                .build()),
                                        List.of()))))
                .build();
        SnapshotIndex index = SnapshotIndex.compile(broken);
        assertThat(index.problems()).anyMatch(p -> p.contains("without patterns"));
        LearnedAddresses everything = (endpoint, set, family, hi, lo) -> true;
        assertThat(Decision.allowed(index.decide(packet("10.1.0.1", "192.0.2.10", TCP, 443), everything)))
                .isFalse();
    }

    @Test
    void verdictsOfAnEndpointThatWatchesDomainNamesMayUseLearnedAddressesOthersNot() {
        assertThat(INDEX.mayUseLearned(packet("10.1.0.1", "192.0.2.10", TCP, 443)))
                .as("from a watching endpoint")
                .isTrue();
        assertThat(INDEX.mayUseLearned(packet("192.0.2.10", "10.1.0.2", TCP, 443)))
                .as("to a watching endpoint (its ingress may name domains)")
                .isTrue();
        assertThat(INDEX.mayUseLearned(packet("192.0.2.10", "192.0.2.11", TCP, 443)))
                .as("neither end local")
                .isFalse();
        NodeSnapshot plain = SNAPSHOT.toBuilder()
                .clearEndpoints()
                .addEndpoints(endpoint(
                        "t/c", List.of("10.1.0.3"), tier("admin", Action.PASS, List.of(), List.of("allow-api"))))
                .build();
        SnapshotIndex notWatching = SnapshotIndex.compile(plain);
        assertThat(notWatching.mayUseLearned(packet("10.1.0.3", "192.0.2.10", TCP, 443)))
                .as("an endpoint that watches nothing learns nothing")
                .isFalse();
    }
}
