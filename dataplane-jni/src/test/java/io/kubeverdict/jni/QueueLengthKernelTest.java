// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.QueuedCounter;
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
 * The queue length the shim sets (NFQA_CFG_QUEUE_MAXLEN) and what the kernel does with the
 * overflow of a full queue in each mode: a queue of {@value #LENGTH} that nobody reads gets
 * {@value #FLOWS} new UDP flows. Fail-closed, the overflow is dropped and counted as "dropped";
 * fail-open, it is delivered unchecked, and the kernel counts it nowhere: only the table's own
 * counter of what it sent to the queue shows it.
 */
@KernelTest
class QueueLengthKernelTest {
    private static final int QUEUE = 310;
    private static final int PORT = 91;
    private static final int LENGTH = 8;
    private static final int FLOWS = 20;
    private DpTestbed bed;
    private final Set<Integer> arrived = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
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
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    @Test
    void failClosedDropsWhatDoesNotFitAndCountsIt() throws Exception {
        Dataplane table = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(() -> new NfQueue(QUEUE, NfQueue.FLAG_GSO, NfQueue.COPY_BYTES, LENGTH)));
        assertThat(queue.length()).isEqualTo(LENGTH);

        sendFlows();
        QueueCounters counters = awaitCounters(node, c -> c.waiting() + c.dropped() == FLOWS);
        assertThat(counters.waiting()).as("the queue holds its length, no more").isEqualTo(LENGTH);
        assertThat(counters.dropped())
                .as("the overflow is dropped and counted (kubeverdict_queue_dropped_total)")
                .isEqualTo(FLOWS - LENGTH);
        assertThat(counters.idSequence()).as("only queued packets get ids").isEqualTo(LENGTH);
        assertThat(unseen(table, counters))
                .as("every packet the table queued was queued or counted")
                .isZero();
        Thread.sleep(200);
        assertThat(arrived).as("nothing passed without a verdict").isEmpty();
    }

    @Test
    void failOpenDeliversWhatDoesNotFitAndOnlyOurCounterShowsIt() throws Exception {
        Dataplane table = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, true, Dataplane.BOTH_PODS));
        NetnsThread node = bed.own(new NetnsThread(bed.node.path()));
        NfQueue queue = bed.own(node.call(
                () -> new NfQueue(QUEUE, NfQueue.FLAG_GSO | NfQueue.FLAG_FAIL_OPEN, NfQueue.COPY_BYTES, LENGTH)));
        assertThat(queue.length()).isEqualTo(LENGTH);

        sendFlows();
        awaitArrived(FLOWS - LENGTH);
        QueueCounters counters = awaitCounters(node, c -> c.waiting() == LENGTH);
        assertThat(counters.idSequence()).isEqualTo(LENGTH);
        // NFQA_CFG_F_FAIL_OPEN: the kernel accepts the overflow without counting it anywhere, so
        // kubeverdict_queue_dropped_total stays 0; the table's own counter (kubeverdict_queue_entered_total)
        // less the queue's ids and drops shows it.
        assertThat(counters.dropped()).isZero();
        assertThat(counters.userDropped()).isZero();
        assertThat(unseen(table, counters))
                .as("the overflow, visible as entered - queued - dropped")
                .isEqualTo(FLOWS - LENGTH);
        Thread.sleep(200);
        assertThat(arrived)
                .as("the overflow passed unchecked, the queued ones wait")
                .hasSize(FLOWS - LENGTH);
    }

    @Test
    void aLengthOutsideTheBoundsIsRefused() {
        assertThatThrownBy(() -> new NfQueue(QUEUE, 0, NfQueue.COPY_BYTES, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new NfQueue(QUEUE, 0, NfQueue.COPY_BYTES, NfQueue.MAX_LENGTH + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Packets the table sent to the queue that the queue neither took nor counted as dropped. */
    private static long unseen(Dataplane table, QueueCounters counters) throws Exception {
        long entered = table.nodeThread.call(() -> QueuedCounter.read(table.nft, table.manager.config()));
        return entered - counters.idSequence() - counters.dropped();
    }

    /** FLOWS new flows from sockets open at once (distinct source ports), nobody answering. */
    private void sendFlows() throws Exception {
        Netns.call(bed.client.path(), () -> {
            List<DatagramSocket> sockets = new ArrayList<>();
            try {
                for (int i = 0; i < FLOWS; i++) {
                    DatagramSocket s = new DatagramSocket();
                    sockets.add(s);
                    s.send(new DatagramPacket(new byte[8], 8, InetAddress.getByName(SERVER4), PORT));
                }
                return null;
            } finally {
                sockets.forEach(DatagramSocket::close);
            }
        });
    }

    private void awaitArrived(int count) throws InterruptedException {
        for (int i = 0; i < 250 && arrived.size() < count; i++) {
            Thread.sleep(20);
        }
        assertThat(arrived).hasSizeGreaterThanOrEqualTo(count);
    }

    private static QueueCounters awaitCounters(NetnsThread node, java.util.function.Predicate<QueueCounters> done)
            throws Exception {
        QueueCounters counters = null;
        for (int i = 0; i < 250; i++) {
            counters = node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE))
                    .orElse(null);
            if (counters != null && done.test(counters)) {
                return counters;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("queue " + QUEUE + " never got there: " + counters);
    }
}
