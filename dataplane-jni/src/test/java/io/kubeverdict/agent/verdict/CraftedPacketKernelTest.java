// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static io.kubeverdict.testing.dp.DpTestbed.CLIENT4;
import static io.kubeverdict.testing.dp.DpTestbed.CLIENT6;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.dp.Crafted;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RawSender;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Packets no Java socket can send (this kernel has no SCTP sockets; IPv6 extension headers of
 * the sender's choosing), crafted and sent with a raw socket through the node.
 */
@KernelTest
class CraftedPacketKernelTest {
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80, 81);
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    private static void awaitCount(RecordingObserver observer, String key) throws InterruptedException {
        for (int i = 0; i < 60 && observer.count(key) == 0; i++) {
            Thread.sleep(50);
        }
        assertThat(observer.count(key)).as(key + " in " + observer.counts).isPositive();
    }

    @Test
    void sctpInitsAreQueuedAndJudgedByPortOnBothFamilies() throws Exception {
        RecordingObserver observer = new RecordingObserver();
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 200, false, Dataplane.BOTH_PODS))) {
            dp.listen(p -> p.protocol == PacketParser.PROTO_SCTP && p.dstPort == 80 ? 1 : 0, observer, false);
            RawSender.send(bed.client, 4, SERVER4, Crafted.ipv4(132, CLIENT4, SERVER4, Crafted.sctpInit(5000, 80)));
            awaitCount(observer, "4/132/allow");
            RawSender.send(bed.client, 4, SERVER4, Crafted.ipv4(132, CLIENT4, SERVER4, Crafted.sctpInit(5001, 81)));
            awaitCount(observer, "4/132/deny");
            RawSender.send(
                    bed.client,
                    6,
                    SERVER6,
                    Crafted.ipv6(132, CLIENT6, SERVER6, new byte[0], Crafted.sctpInit(5002, 80)));
            awaitCount(observer, "6/132/allow");
            assertThat(observer.failures).hasValue(0);
        }
    }

    /**
     * H4 of the security audit: a fail-open node, port 80 of the server denied. An IPv6 SYN padded
     * with a destination-options header of skip-me options (type 0x1e, which the server passes
     * over and answers) must not get a SYN-ACK: 104 bytes of padding is the audit's packet, whose
     * TCP header used to lie beyond a 128-byte copy (it is now read and judged); 600 bytes puts it
     * beyond the copy range (the packet is unreadable and dropped). The loop goes on.
     */
    @ParameterizedTest(name = "destination options of {0} bytes")
    @ValueSource(ints = {104, 600})
    void aPaddedSynToADeniedPortGetsNoSynAckInFailOpenMode(int padding) throws Exception {
        RecordingObserver observer = new RecordingObserver();
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 201, true, Dataplane.BOTH_PODS))) {
            dp.listen(p -> p.dstPort == 80 ? 0 : 1, observer, true);
            countSynAcksFromPort80(bed.client);
            byte[] syn = Crafted.tcpSyn(40000, 80, Crafted.pseudoSumV6(CLIENT6, SERVER6, 6, 20));
            RawSender.send(
                    bed.client,
                    6,
                    SERVER6,
                    Crafted.ipv6(60, CLIENT6, SERVER6, Crafted.destinationOptions(6, padding), syn));
            // Queued after the padded SYN on the same path: once it is through, a SYN-ACK to that one would be back
            // too.
            assertThat(Probe.tcp(bed.client, SERVER6, 81))
                    .as("an allowed connection after it")
                    .isTrue();
            assertThat(synAcksFromPort80(bed.client))
                    .as("SYN-ACKs to the padded SYN; verdicts " + observer.counts)
                    .isZero();
            awaitCount(observer, padding < NfQueue.COPY_BYTES ? "6/6/deny" : "unreadable/" + PacketParser.BEYOND_COPY);
            assertThat(dp.loop().isRunning()).isTrue();
            assertThat(observer.failures).hasValue(0);
        }
    }

    /** Counts SYN-ACKs from the server's port 80 arriving in the client (a table that goes with the namespace). */
    private static void countSynAcksFromPort80(TestNamespace client) throws Exception {
        client.exec("nft", "add table ip6 kvt_synack");
        client.exec("nft", "add chain ip6 kvt_synack in { type filter hook input priority 0 ; }");
        client.exec(
                "nft",
                "add rule ip6 kvt_synack in ip6 saddr " + SERVER6
                        + " tcp sport 80 tcp flags & (syn | ack) == syn | ack counter");
    }

    private static long synAcksFromPort80(TestNamespace client) throws Exception {
        Matcher m = Pattern.compile("counter packets (\\d+)")
                .matcher(client.exec("nft", "list", "table", "ip6", "kvt_synack"));
        assertThat(m.find()).as("the counting rule").isTrue();
        return Long.parseLong(m.group(1));
    }
}
