// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.tier.KernelTest;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shim's batch receive and batch verdicts on a real queue, driven by hand (no loop): six
 * new UDP flows wait in the queue, are taken in batches of four, and get a verdict pattern whose
 * runs must become batch verdicts that let exactly the accepted flows through.
 */
@KernelTest
class PacketBatchKernelTest {
    private static final int QUEUE = 300;
    private static final int PORT = 90;
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    @Test
    void batchesCarryPacketsAndRunsOfVerdicts() throws Exception {
        Set<Integer> arrived = ConcurrentHashMap.newKeySet();
        DatagramSocket server = bed.own(Netns.call(bed.server.path(), () -> new DatagramSocket(PORT)));
        Thread receiver = new Thread(() -> {
            byte[] buf = new byte[64];
            while (!server.isClosed()) {
                try {
                    DatagramPacket p = new DatagramPacket(buf, buf.length);
                    server.receive(p);
                    arrived.add(p.getPort());
                } catch (Exception e) {
                    return;
                }
            }
        });
        receiver.setDaemon(true);
        receiver.start();

        bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(() -> new NfQueue(QUEUE, NfQueue.FLAG_GSO)));
        assertThat(queue.receiveBuffer(1 << 20)).isGreaterThanOrEqualTo(1 << 20);
        PacketBatch batch = queue.batch(4);
        assertThat(batch.receive(50)).as("nothing queued yet").isZero();

        // Six sockets open at once: six distinct source ports (one closed before the next opens may
        // hand its port on, and the arrivals are told apart by port).
        List<Integer> ports = Netns.call(bed.client.path(), () -> {
            List<DatagramSocket> sockets = new ArrayList<>();
            try {
                List<Integer> sent = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    DatagramSocket s = new DatagramSocket();
                    sockets.add(s);
                    byte[] data = "0123456789".getBytes();
                    s.send(new DatagramPacket(data, data.length, InetAddress.getByName(SERVER4), PORT));
                    sent.add(s.getLocalPort());
                }
                return sent;
            } finally {
                sockets.forEach(DatagramSocket::close);
            }
        });
        awaitWaiting(node, 6);

        assertThat(batch.receive(1000)).isEqualTo(4);
        int firstId = batch.packetId(0);
        for (int i = 0; i < 4; i++) {
            assertThat(batch.packetId(i)).isEqualTo(firstId + i);
            assertThat(batch.hook(i)).as("forward").isEqualTo(2);
            assertThat(batch.hwProtocol(i)).isEqualTo(0x0800);
            assertThat(batch.packetLength(i)).isEqualTo(20 + 8 + 10);
            assertThat(batch.copiedLength(i)).isEqualTo(38);
            int srcPort = ((batch.buffer().get(batch.dataOffset(i) + 20) & 0xff) << 8)
                    | (batch.buffer().get(batch.dataOffset(i) + 21) & 0xff);
            assertThat(srcPort).isEqualTo(ports.get(i));
        }
        batch.accept(0);
        batch.accept(1);
        batch.drop(2);
        batch.accept(3);
        assertThat(batch.sendVerdicts()).as("batch(0..1), single 2, single 3").isEqualTo(3);

        assertThat(batch.receive(1000)).isEqualTo(2);
        assertThat(batch.packetId(0)).isEqualTo(firstId + 4);
        batch.accept(0);
        batch.accept(1);
        assertThat(batch.sendVerdicts()).as("one batch verdict").isEqualTo(1);

        awaitWaiting(node, 0);
        for (int i = 0; i < 40 && arrived.size() < 5; i++) {
            Thread.sleep(25);
        }
        Thread.sleep(100);
        assertThat(arrived)
                .containsExactlyInAnyOrder(ports.get(0), ports.get(1), ports.get(3), ports.get(4), ports.get(5));
        assertThat(queue.received()).isEqualTo(6);
        assertThat(queue.verdictMessages()).isEqualTo(4);
        assertThat(queue.enobufs()).isZero();
        QueueCounters counters = node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE))
                .orElseThrow();
        assertThat(counters.idSequence()).isEqualTo(firstId + 5);
        assertThat(counters.copyRange()).isEqualTo(NfQueue.COPY_BYTES);
        assertThat(counters.dropped()).isZero();
        assertThat(counters.userDropped()).isZero();
    }

    @Test
    void aFullSocketIsCountedAsEnobufsAndReceivingGoesOn() throws Exception {
        bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(() -> new NfQueue(QUEUE, NfQueue.FLAG_GSO)));
        queue.receiveBuffer(1); // the kernel's minimum: a few messages
        PacketBatch batch = queue.batch(64);
        for (int i = 0; i < 40; i++) {
            Netns.call(bed.client.path(), () -> {
                try (DatagramSocket s = new DatagramSocket()) {
                    s.send(new DatagramPacket(new byte[8], 8, InetAddress.getByName(SERVER4), PORT));
                }
                return null;
            });
        }
        int received = 0;
        for (int i = 0; i < 5; i++) {
            int n = batch.receive(100);
            for (int j = 0; j < n; j++) {
                batch.drop(j);
            }
            batch.sendVerdicts();
            received += n;
        }
        assertThat(queue.enobufs()).isPositive();
        assertThat(received).isBetween(1, 39);
        QueueCounters counters = node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE))
                .orElseThrow();
        assertThat(counters.userDropped())
                .as("the kernel dropped what it could not hand over")
                .isEqualTo(40 - received);
        assertThat(counters.waiting()).isZero();
    }

    @Test
    void aVerdictTheKernelRefusesIsCountedNotFatal() throws Exception {
        bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(() -> new NfQueue(QUEUE, NfQueue.FLAG_GSO)));
        PacketBatch batch = queue.batch(8);
        Netns.call(bed.client.path(), () -> {
            try (DatagramSocket s = new DatagramSocket()) {
                s.send(new DatagramPacket(new byte[8], 8, InetAddress.getByName(SERVER4), PORT));
            }
            return null;
        });
        assertThat(batch.receive(2000)).isEqualTo(1);
        int id = batch.packetId(0);
        batch.buffer().putInt(0, id + 1000); // a packet id the queue never had
        batch.accept(0);
        assertThat(batch.sendVerdicts()).isEqualTo(1);
        assertThat(batch.receive(200)).isZero();
        assertThat(queue.netlinkErrors()).isEqualTo(1);
        awaitWaiting(node, 1); // the real packet still waits for its verdict
    }

    @Test
    void verdictsNeedNoPackets() throws Exception {
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(() -> new NfQueue(QUEUE + 1, 0)));
        PacketBatch batch = queue.batch(8);
        assertThat(batch.receive(10)).isZero();
        assertThat(batch.sendVerdicts()).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> batch.packetId(0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> queue.batch(16))
                .isInstanceOf(IllegalStateException.class);
    }

    private static void awaitWaiting(NetnsThread node, long expected) throws Exception {
        long waiting = -1;
        for (int i = 0; i < 100; i++) {
            waiting = node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE))
                    .map(QueueCounters::waiting)
                    .orElse(-1L);
            if (waiting == expected) {
                return;
            }
            Thread.sleep(20);
        }
        assertThat(waiting).as("packets waiting in queue " + QUEUE).isEqualTo(expected);
    }
}
