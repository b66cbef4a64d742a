// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Responses in, learned addresses out, and what the verdict function then says. */
class DnsLearnerTest {
    final AtomicLong clock = new AtomicLong(1_000_000_000L);
    final LearnedAddressBook book = new LearnedAddressBook(clock::get, 4);
    final SnapshotIndex index = SnapshotIndex.compile(SnapshotFixtures.domainNames());
    final LearnedAddressBook.View view = book.view(index);
    final DnsLearner learner = new DnsLearner(5, 600, DnsResolvers.of(java.util.List.of("10.96.0.10", "fd00::53")));
    static final int ID = 0x1234; // DnsMessages' responses carry it

    /** The pod's query (from port 40000, ID 0x1234) to the cluster DNS, as the queue sees it. */
    int ask(String pod, String name, int qtype) {
        String resolver = pod.contains(":") ? "fd00::53" : "10.96.0.10";
        return handle(DnsPackets.udpQuery(pod, resolver, DnsStubClient.query(ID, name, qtype)));
    }

    int ask(String name, int qtype) {
        return ask("10.0.0.1", name, qtype);
    }

    int handle(byte[] packet) {
        ByteBuffer buf = ByteBuffer.allocateDirect(packet.length + 16);
        buf.put(16, packet);
        return learner.handle(view, buf, 16, packet.length);
    }

    boolean allowed(String src, String dst) {
        PacketTuple p = new PacketTuple().set(IpAddress.parse(src), IpAddress.parse(dst), Protocol.TCP_VALUE, 443);
        return Decision.allowed(index.decide(p, view));
    }

    @Test
    void anAnswerForAWatchedNameAllowsItsAddressForItsTtl() {
        assertThat(allowed("10.0.0.1", "192.0.2.10")).isFalse();
        byte[] answer = DnsMessages.response("API.test", 1)
                .a("api.test", 60, "192.0.2.10")
                .bytes();
        assertThat(ask("API.test", 1)).isEqualTo(DnsLearner.QUERY_RECORDED);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", answer))).isEqualTo(DnsLearner.LEARNED);
        assertThat(allowed("10.0.0.1", "192.0.2.10")).isTrue();
        assertThat(allowed("10.0.0.1", "192.0.2.11")).isFalse();
        ask("api.test", 1);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", answer))).isEqualTo(DnsLearner.REFRESHED);
        clock.addAndGet(59_000_000_000L);
        assertThat(allowed("10.0.0.1", "192.0.2.10")).isTrue();
        clock.addAndGet(1_000_000_000L);
        assertThat(allowed("10.0.0.1", "192.0.2.10")).as("expired").isFalse();
        assertThat(book.sweep()).isZero();
    }

    @Test
    void ttlsAreClampedAndWildcardsFollowCnameChains() {
        byte[] answer = DnsMessages.response("web.svc.test", 1)
                .cname("web.svc.test", 0, "lb.cloud.example")
                .a("lb.cloud.example", 0, "198.51.100.7")
                .aaaa("lb.cloud.example", 100_000, "2001:db8::7")
                .bytes();
        ask("web.svc.test", 1);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", answer))).isEqualTo(DnsLearner.LEARNED);
        assertThat(allowed("10.0.0.1", "198.51.100.7")).isTrue();
        assertThat(allowed("fd00::1", "2001:db8::7")).isTrue();
        LearnedSet svc = view.set(0, index.domainWatches(0)[1]);
        assertThat(svc.entries(clock.get())).extracting(LearnedSet.Entry::name).containsOnly("web.svc.test");
        clock.addAndGet(5_000_000_000L); // the CNAME's TTL 0 -> the 5 s minimum for both
        assertThat(allowed("10.0.0.1", "198.51.100.7")).isFalse();
        assertThat(allowed("fd00::1", "2001:db8::7")).isFalse();
    }

    @Test
    void unwatchedNamesPodsAndBrokenPacketsTeachNothing() {
        byte[] other = DnsMessages.response("evil.example", 1)
                .a("evil.example", 60, "203.0.113.6")
                .bytes();
        ask("evil.example", 1);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", other))).isEqualTo(DnsLearner.NO_MATCH);
        byte[] api = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "192.0.2.10")
                .bytes();
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.2", api))).isEqualTo(DnsLearner.NOT_WATCHED);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.9", api))).isEqualTo(DnsLearner.NOT_WATCHED);
        byte[] cut = DnsPackets.udp("10.96.0.10", "10.0.0.1", api);
        assertThat(handle(java.util.Arrays.copyOf(cut, cut.length - 3))).isEqualTo(DnsLearner.TRUNCATED);
        assertThat(handle(new byte[] {0x45, 0})).isEqualTo(DnsLearner.TRUNCATED);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", new byte[] {1, 2, 3})))
                .isEqualTo(DnsLearner.TRUNCATED);
        assertThat(allowed("10.0.0.1", "203.0.113.6")).isFalse();
        assertThat(allowed("10.0.0.1", "192.0.2.10")).isFalse();
        assertThat(learner.count(DnsLearner.TRUNCATED)).isEqualTo(3);
    }

    @Test
    void answersOverTcpTeachNothingAndAreCounted() {
        // H3: a TCP segment need not start a message; this one continues a TXT answer whose rdata
        // holds a length prefix and a forged response. Whole messages over TCP teach nothing either.
        byte[] forged = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "203.0.113.9")
                .bytes();
        byte[] continuation = ByteBuffer.allocate(2 + forged.length)
                .putShort((short) forged.length)
                .put(forged)
                .array();
        assertThat(handle(DnsPackets.tcpRaw("10.96.0.10", "10.0.0.1", continuation)))
                .isEqualTo(DnsLearner.TCP_NOT_LEARNED);
        assertThat(allowed("10.0.0.1", "203.0.113.9")).isFalse();
        byte[] a = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "192.0.2.20")
                .bytes();
        assertThat(handle(DnsPackets.tcp("10.96.0.10", "10.0.0.1", a))).isEqualTo(DnsLearner.TCP_NOT_LEARNED);
        assertThat(allowed("10.0.0.1", "192.0.2.20"))
                .as("fail-closed: names answered over TCP stay denied")
                .isFalse();
        assertThat(handle(DnsPackets.tcpRaw("10.96.0.10", "10.0.0.1", new byte[0])))
                .isEqualTo(DnsLearner.TCP_NOT_LEARNED);
        assertThat(learner.count(DnsLearner.TCP_NOT_LEARNED)).isEqualTo(3);
    }

    @Test
    void aFullSetEvictsItsOldestExpiringAddress() {
        DnsMessages m = DnsMessages.response("api.test", 1);
        for (int i = 1; i <= 6; i++) {
            m.a("api.test", 60 + i, "192.0.2." + i); // later addresses expire later
        }
        ask("api.test", 1);
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", m.bytes()))).isEqualTo(DnsLearner.LEARNED);
        assertThat(allowed("10.0.0.1", "192.0.2.6")).isTrue();
        assertThat(allowed("10.0.0.1", "192.0.2.3")).isTrue();
        assertThat(allowed("10.0.0.1", "192.0.2.2"))
                .as("evicted: the limit is 4")
                .isFalse();
        assertThat(view.set(0, index.domainWatches(0)[0]).evicted()).isEqualTo(2);
        assertThat(book.budget().evictions()).isEqualTo(2);
    }

    @Test
    void aMillionForgedNamesThroughTheLearnerKeepEveryTableBounded() {
        // H5: a wildcard CNAME makes every random name a watched one; 10^6 distinct names, and
        // addresses cycling over 8192 (twice the set's limit here: 4).
        for (int i = 0; i < 1_000_000; i++) {
            clock.addAndGet(1_000);
            ask("r" + i + ".attacker.test", 1);
            byte[] answer = DnsMessages.response("r" + i + ".attacker.test", 1)
                    .cname("r" + i + ".attacker.test", 60, "api.test")
                    .a("api.test", 60, "10.200." + (i >> 8 & 31) + "." + (i & 255))
                    .bytes();
            handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", answer));
        }
        LearnedSet set = view.set(0, index.domainWatches(0)[0]);
        assertThat(set.size()).isEqualTo(4);
        assertThat(set.nameBytesHeld()).isLessThanOrEqualTo(4L * "r999999.attacker.test".length());
        assertThat(book.size()).isEqualTo(4);
        assertThat(learner.addressesLearned()).isEqualTo(1_000_000);
        assertThat(book.budget().evictions()).isEqualTo(1_000_000 - 4);
        assertThat(learner.queriesInFlight())
                .as("every query consumed by its answer")
                .isZero();
    }

    @Test
    void aNewGenerationKeepsWhatItStillWatches() {
        ask("api.test", 1);
        handle(DnsPackets.udp(
                "10.96.0.10",
                "10.0.0.1",
                DnsMessages.response("api.test", 1)
                        .a("api.test", 60, "192.0.2.30")
                        .bytes()));
        SnapshotIndex next = SnapshotIndex.compile(
                SnapshotFixtures.domainNames().toBuilder().setNode("n1-again").build());
        LearnedAddressBook.View again = book.view(next);
        PacketTuple p = new PacketTuple()
                .set(IpAddress.parse("10.0.0.1"), IpAddress.parse("192.0.2.30"), Protocol.TCP_VALUE, 443);
        assertThat(Decision.allowed(next.decide(p, again))).isTrue();
        NodeSnapshot unwatched = SnapshotFixtures.domainNames().toBuilder()
                .setEndpoints(
                        0,
                        SnapshotFixtures.domainNames().getEndpoints(0).toBuilder()
                                .setEndpoint(SnapshotFixtures.domainNames().getEndpoints(0).getEndpoint().toBuilder()
                                        .clearDomainWatches()))
                .build();
        book.view(SnapshotIndex.compile(unwatched));
        assertThat(book.setCount()).isZero();
    }

    // ------------------------------------------------------------------ M5: only answers to the pod's own questions

    @Test
    void anAnswerTeachesOnlyInReplyToTheQueryThePodSentThatResolver() {
        byte[] answer = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "203.0.113.9")
                .bytes();
        String resolver = "10.96.0.10";
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", answer)))
                .as("no query")
                .isEqualTo(DnsLearner.UNSOLICITED);
        ask("api.test", 1);
        assertThat(handle(DnsPackets.udp(resolver, 53, "10.0.0.1", 40001, answer)))
                .as("another pod port")
                .isEqualTo(DnsLearner.UNSOLICITED);
        assertThat(handle(DnsPackets.udp("10.96.0.11", "10.0.0.1", answer)))
                .as("another server")
                .isEqualTo(DnsLearner.UNSOLICITED);
        byte[] otherId = answer.clone();
        otherId[1] ^= 1;
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", otherId)))
                .as("another ID")
                .isEqualTo(DnsLearner.UNSOLICITED);
        byte[] otherName = DnsMessages.response("api.test.evil", 1)
                .a("api.test", 60, "203.0.113.9")
                .bytes();
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", otherName)))
                .as("another question")
                .isEqualTo(DnsLearner.UNSOLICITED);
        byte[] otherType = DnsMessages.response("api.test", 28)
                .a("api.test", 60, "203.0.113.9")
                .bytes();
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", otherType)))
                .as("another type")
                .isEqualTo(DnsLearner.UNSOLICITED);
        assertThat(allowed("10.0.0.1", "203.0.113.9")).isFalse();
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", answer))).isEqualTo(DnsLearner.LEARNED);
        assertThat(allowed("10.0.0.1", "203.0.113.9")).isTrue();
        byte[] again = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "203.0.113.10")
                .bytes();
        assertThat(handle(DnsPackets.udp(resolver, "10.0.0.1", again)))
                .as("the query was consumed")
                .isEqualTo(DnsLearner.UNSOLICITED);
        assertThat(allowed("10.0.0.1", "203.0.113.10")).isFalse();
    }

    @Test
    void aQueryToAServerThatIsNoAllowedResolverIsNotRecordedAndItsAnswerTeachesNothing() {
        // the audit's M5: "allow port 53 anywhere", dig @198.51.100.7 api.test
        byte[] query = DnsStubClient.query(ID, "api.test", 1);
        assertThat(handle(DnsPackets.udpQuery("10.0.0.1", "198.51.100.7", query)))
                .isEqualTo(DnsLearner.QUERY_TO_OTHER_SERVER);
        byte[] answer = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "203.0.113.9")
                .bytes();
        assertThat(handle(DnsPackets.udp("198.51.100.7", "10.0.0.1", answer))).isEqualTo(DnsLearner.UNSOLICITED);
        assertThat(allowed("10.0.0.1", "203.0.113.9")).isFalse();
        DnsLearner none = new DnsLearner(5, 600, DnsResolvers.none());
        ByteBuffer q = ByteBuffer.wrap(DnsPackets.udpQuery("10.0.0.1", "10.96.0.10", query));
        assertThat(none.handle(view, q, 0, q.capacity()))
                .as("no resolvers: nothing is recorded")
                .isEqualTo(DnsLearner.QUERY_TO_OTHER_SERVER);
    }

    @Test
    void aQueryWaitsForItsAnswerTenSecondsAtMost() {
        ask("api.test", 1);
        clock.addAndGet(DnsLearner.QUERY_LIFETIME_NANOS);
        byte[] answer = DnsMessages.response("api.test", 1)
                .a("api.test", 60, "192.0.2.10")
                .bytes();
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", answer))).isEqualTo(DnsLearner.UNSOLICITED);
        assertThat(learner.queriesInFlight()).isZero();
    }

    @Test
    void queriesInFlightAreBoundedPerPodAndTheOldestGoFirst() {
        for (int i = 0; i < DnsLearner.QUERIES_PER_POD + 44; i++) {
            assertThat(ask("q" + i + ".svc.test", 1)).isEqualTo(DnsLearner.QUERY_RECORDED);
        }
        assertThat(learner.queriesInFlight()).isEqualTo(DnsLearner.QUERIES_PER_POD);
        assertThat(learner.queryPodEvictions()).isEqualTo(44);
        byte[] evicted = DnsMessages.response("q43.svc.test", 1)
                .a("q43.svc.test", 60, "192.0.2.43")
                .bytes();
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", evicted))).isEqualTo(DnsLearner.UNSOLICITED);
        byte[] kept = DnsMessages.response("q44.svc.test", 1)
                .a("q44.svc.test", 60, "192.0.2.44")
                .bytes();
        assertThat(handle(DnsPackets.udp("10.96.0.10", "10.0.0.1", kept))).isEqualTo(DnsLearner.LEARNED);
    }

    @Test
    void queriesFromPodsThatWatchNothingAreNotRecorded() {
        assertThat(ask("10.0.0.2", "api.test", 1)).isEqualTo(DnsLearner.NOT_WATCHED);
        assertThat(learner.queriesInFlight()).isZero();
    }
}
