package io.kubeverdict.agent.verdict;

import static io.kubeverdict.testing.dp.DpTestbed.CLIENT4;
import static io.kubeverdict.testing.dp.DpTestbed.CLIENT6;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.testing.dp.Crafted;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RawSender;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Packets no Java socket can send (this kernel has no SCTP sockets; IPv6 extension headers
 * longer than the 128 copied bytes), crafted and sent with a raw socket through the node.
 */
@KernelTest
class CraftedPacketKernelTest {
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80);
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
            RawSender.send(bed.client, 6, SERVER6, Crafted.ipv6(132, CLIENT6, SERVER6, new byte[0], Crafted.sctpInit(5002, 80)));
            awaitCount(observer, "6/132/allow");
            assertThat(observer.failures).hasValue(0);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aPacketWhoseHeadersExceedTheCopyGetsTheDefaultAndTheLoopGoesOn(boolean defaultAllow) throws Exception {
        RecordingObserver observer = new RecordingObserver();
        try (Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 201, false, Dataplane.BOTH_PODS))) {
            dp.listen(p -> p.dstPort == 80 ? 1 : 0, observer, defaultAllow);
            byte[] hbh = Crafted.hopByHop(6, 12); // 104 bytes: TCP starts at byte 144, beyond the 128 copied
            byte[] syn = Crafted.tcpSyn(40000, 80, Crafted.pseudoSumV6(CLIENT6, SERVER6, 6, 20));
            RawSender.send(bed.client, 6, SERVER6, Crafted.ipv6(0, CLIENT6, SERVER6, hbh, syn));
            awaitCount(observer, "malformed/" + PacketParser.TRUNCATED + "/" + (defaultAllow ? "allow" : "deny"));
            assertThat(dp.loop().isRunning()).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).as("the loop still answers").isTrue();
            assertThat(observer.failures).hasValue(0);
        }
    }
}
