// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.testing.tier.Tiers;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Tag;

/**
 * Any bytes as a DNS message, and as the payload of a response to a watching pod: never an
 * exception, nothing read outside the given range (the message sits at the very end of a buffer,
 * and in a direct buffer between different canaries that must not change the answer), results
 * that agree with the rules ({@link DnsResponseParser}), and no allocation when a message that
 * parsed is parsed again; as an answer nobody asked for, it teaches nothing ({@link DnsLearnerFuzzTest}
 * fuzzes answers to questions asked). Regression inputs: DnsResponseParserFuzzTestInputs/anyMessage.
 */
@Tag(Tiers.FUZZ)
class DnsResponseParserFuzzTest {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final DnsResponseParser parser = new DnsResponseParser();
    private final DnsResponseParser other = new DnsResponseParser();
    private final ByteBuffer direct = ByteBuffer.allocateDirect(70_000).order(ByteOrder.nativeOrder());
    private final SnapshotIndex index = SnapshotIndex.compile(SnapshotFixtures.domainNames());
    private final LearnedAddressBook book = new LearnedAddressBook();
    private final LearnedAddressBook.View view = book.view(index);
    private final DnsLearner learner = new DnsLearner(1, 60, DnsResolvers.of(java.util.List.of("10.96.0.10")));

    @FuzzTest
    void anyMessage(byte[] message) {
        ByteBuffer exact = ByteBuffer.wrap(message);
        exact.position(exact.limit()); // absolute reads only
        int result = parser.parse(exact, 0, message.length);
        assertThat(result).isBetween(DnsResponseParser.OK, DnsResponseParser.UNSUPPORTED);
        if (result == DnsResponseParser.OK) {
            checkConsistent();
            long before = THREADS.getCurrentThreadAllocatedBytes();
            parser.parse(exact, 0, message.length);
            assertThat(THREADS.getCurrentThreadAllocatedBytes() - before)
                    .as("bytes allocated parsing again")
                    .isZero();
        } else {
            assertThat(parser.addressCount()).isZero();
            assertThat(parser.chainCount()).isZero();
        }
        if (message.length + 100 <= direct.capacity()) {
            for (byte canary : new byte[] {0, (byte) 0xC0, 0x3f}) {
                for (int i = 0; i < message.length + 100; i++) {
                    direct.put(i, canary);
                }
                direct.put(50, message);
                assertThat(other.parse(direct, 50, message.length)).isEqualTo(result);
                assertThat(other.addressCount()).isEqualTo(parser.addressCount());
                for (int a = 0; a < parser.addressCount(); a++) {
                    assertThat(other.addressLo(a)).isEqualTo(parser.addressLo(a));
                    assertThat(other.addressTtl(a)).isEqualTo(parser.addressTtl(a));
                }
            }
        }
        // As a UDP response to the watching pod that asked nothing: the learner never throws, never learns.
        byte[] packet = DnsPackets.udp("10.96.0.10", "10.0.0.1", message.length > 65000 ? new byte[0] : message);
        int outcome = learner.handle(view, ByteBuffer.wrap(packet), 0, packet.length);
        assertThat(outcome)
                .isBetween(DnsLearner.LEARNED, DnsLearner.UNSOLICITED)
                .isNotIn(DnsLearner.LEARNED, DnsLearner.REFRESHED, DnsLearner.NO_MATCH, DnsLearner.SET_FULL);
        assertThat(book.size()).isZero();
    }

    private void checkConsistent() {
        assertThat(parser.chainCount()).isBetween(1, DnsResponseParser.MAX_CHAIN);
        assertThat(parser.addressCount())
                .isLessThanOrEqualTo(Math.min(parser.answerCount(), DnsResponseParser.MAX_RECORDS));
        for (int c = 0; c < parser.chainCount(); c++) {
            assertThat(parser.chainNameLength(c)).isBetween(0, DnsResponseParser.MAX_NAME);
            assertThat(parser.chainParent(c)).isLessThan(c);
            String name = parser.chainName(c);
            assertThat(name)
                    .isEqualTo(name.toLowerCase(java.util.Locale.ROOT))
                    .doesNotStartWith(".")
                    .doesNotContain("..");
        }
        for (int a = 0; a < parser.addressCount(); a++) {
            assertThat(parser.addressFamily(a)).isIn(4, 6);
            assertThat(parser.addressTtl(a)).isBetween(0L, 0x7FFF_FFFFL);
            assertThat(parser.addressChain(a)).isBetween(0, parser.chainCount() - 1);
            if (parser.addressFamily(a) == 4) {
                assertThat(parser.addressHi(a)).isZero();
                assertThat(parser.addressLo(a) >>> 32).isZero();
            }
        }
    }
}
