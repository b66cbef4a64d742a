// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.testing.tier.Tiers;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;

/**
 * Forged and split answers against the learner (H3, M5): the pod asks one question (a fuzzed
 * name and type, ID and port) of the cluster DNS; then comes a fuzzed answer, sent in one of
 * several ways. Whatever the bytes: TCP segments (whole, or the message split at any point, each
 * part as its own segment) teach nothing; a UDP answer that differs from the query in source,
 * port or ID, or that comes from a server the pod did not ask, teaches nothing; only the UDP
 * answer in the query's flow, with its ID and question, may teach, only once, and then only
 * addresses the parsed answer carries for the chain of the question. Every table stays bounded.
 * Regression inputs: DnsLearnerFuzzTestInputs/forgedAndSplit.
 */
@Tag(Tiers.FUZZ)
class DnsLearnerFuzzTest {
    private static final String POD = "10.0.0.1";
    private static final String RESOLVER = "10.96.0.10";

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final SnapshotIndex index = SnapshotIndex.compile(SnapshotFixtures.domainNames());
    private final LearnedAddressBook book = new LearnedAddressBook(clock::get, 64, 256);
    private final LearnedAddressBook.View view = book.view(index);
    private final DnsLearner learner = new DnsLearner(1, 60, DnsResolvers.of(List.of(RESOLVER)));
    private final DnsResponseParser parser = new DnsResponseParser();

    @FuzzTest
    void forgedAndSplit(FuzzedDataProvider data) {
        clock.addAndGet(DnsLearner.QUERY_LIFETIME_NANOS); // earlier runs' queries expire
        int id = data.consumeInt(0, 0xffff);
        int qtype = data.consumeBoolean() ? 1 : 28;
        String name =
                data.consumeBoolean() ? "api.test" : data.consumeAsciiString(30).toLowerCase() + ".svc.test";
        int how = data.consumeInt(0, 5);
        int split = data.consumeInt(0, 600);
        byte[] answer = data.consumeRemainingAsBytes();
        if (answer.length > 4000) {
            return;
        }
        long learnedBefore = learner.addressesLearned();
        byte[] query = DnsStubClient.query(id, name, qtype);
        int asked = handle(DnsPackets.udp(POD, 40000, RESOLVER, 53, query));
        assertThat(asked).isIn(DnsLearner.QUERY_RECORDED, DnsLearner.MALFORMED, DnsLearner.TRUNCATED);
        // What the query asks, as the wire says: a name with empty labels ("....svc.test") ends at the
        // first one, so its question is the root with the type and class the next bytes give.
        boolean wellFormed = parser.parseQuery(ByteBuffer.wrap(query), 0, query.length) == DnsResponseParser.OK;
        String askedName = wellFormed ? parser.chainName(0) : null;
        int askedType = wellFormed ? parser.questionType() : -1;
        int outcome = switch (how) {
            case 0 -> handle(DnsPackets.tcp(RESOLVER, POD, answer));
            case 1 -> split(answer, split);
            case 2 -> handle(DnsPackets.udp(RESOLVER, 53, POD, 40001, answer));
            case 3 -> handle(DnsPackets.udp("10.96.0.11", 53, POD, 40000, answer));
            case 4 -> handle(DnsPackets.udp(RESOLVER, 53, POD, 40000, withId(answer, id ^ 1)));
            default -> handle(DnsPackets.udp(RESOLVER, 53, POD, 40000, answer));
        };
        assertThat(outcome).isBetween(DnsLearner.LEARNED, DnsLearner.UNSOLICITED);
        if (how < 5) {
            assertThat(learner.addressesLearned())
                    .as("forged or split: nothing learned")
                    .isEqualTo(learnedBefore);
            assertThat(outcome).isNotIn(DnsLearner.LEARNED, DnsLearner.REFRESHED);
        } else if (outcome == DnsLearner.LEARNED || outcome == DnsLearner.REFRESHED || outcome == DnsLearner.NO_MATCH) {
            // it answered the question asked: same ID, name, type; and it is consumed
            assertThat(parser.parse(ByteBuffer.wrap(answer), 0, answer.length)).isEqualTo(DnsResponseParser.OK);
            assertThat(parser.id()).isEqualTo(id);
            assertThat(parser.questionType()).isEqualTo(askedType);
            assertThat(asked).isEqualTo(DnsLearner.QUERY_RECORDED);
            assertThat(parser.chainName(0)).isEqualTo(askedName);
            assertThat(handle(DnsPackets.udp(RESOLVER, 53, POD, 40000, answer)))
                    .as("an answer teaches once")
                    .isIn(DnsLearner.UNSOLICITED);
        }
        assertThat(book.size()).isLessThanOrEqualTo(256);
        assertThat(learner.queriesInFlight()).isLessThanOrEqualTo(DnsLearner.QUERIES_PER_POD);
    }

    /** The message in two TCP segments, split at any point (the length prefix included). */
    private int split(byte[] message, int at) {
        byte[] stream = ByteBuffer.allocate(2 + message.length)
                .putShort((short) message.length)
                .put(message)
                .array();
        int cut = Math.min(at, stream.length);
        int first = handle(DnsPackets.tcpRaw(RESOLVER, POD, Arrays.copyOfRange(stream, 0, cut)));
        int second = handle(DnsPackets.tcpRaw(RESOLVER, POD, Arrays.copyOfRange(stream, cut, stream.length)));
        assertThat(first).isEqualTo(DnsLearner.TCP_NOT_LEARNED);
        return second;
    }

    private static byte[] withId(byte[] answer, int id) {
        byte[] b = answer.clone();
        if (b.length >= 2) {
            b[0] = (byte) (id >>> 8);
            b[1] = (byte) id;
        }
        return b;
    }

    private int handle(byte[] packet) {
        return learner.handle(view, ByteBuffer.wrap(packet), 0, packet.length);
    }
}
