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
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Config messages (bind, params, unbind) wait for their ack on the socket packets arrive on, so
 * packet messages may come first (security audit L4). A queue that copies whole DNS responses
 * ({@value #DNS_COPY_BYTES} bytes, the agent's DNS queue) makes packet messages larger than a
 * page; the wait must take them whole and go on to its ack.
 */
@KernelTest
class QueueConfigKernelTest {
    private static final int QUEUE = 320;
    private static final int PORT = 92;
    /** The agent's DNS queue's copy (Agent.DNS_COPY_BYTES). */
    private static final int DNS_COPY_BYTES = 9216;
    /** A UDP payload whose packet message is about twice a page (IPv4 reassembles it before the hooks). */
    private static final int LARGE = 8000;

    private DpTestbed bed;
    private NetnsThread node;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        node = bed.own(new NetnsThread(bed.node.path()));
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    @Test
    void unbindSucceedsWhileWholeDnsResponsesWaitUnread() throws Exception {
        NfQueue queue = node.call(() -> new NfQueue(QUEUE, 0, DNS_COPY_BYTES));
        try {
            sendLarge(3);
            awaitWaiting(3);
        } catch (Exception | Error e) {
            closeQuietly(queue);
            throw e;
        }
        // The three packet messages (each over 8 KiB) are in the socket before UNBIND's ack.
        node.call(() -> {
            queue.close();
            return null;
        });
        assertThat(counters()).as("the queue is unbound").isEmpty();
    }

    private void sendLarge(int count) throws Exception {
        Netns.call(bed.client.path(), () -> {
            List<DatagramSocket> sockets = new ArrayList<>();
            try {
                for (int i = 0; i < count; i++) {
                    DatagramSocket s = new DatagramSocket();
                    sockets.add(s);
                    s.send(new DatagramPacket(new byte[LARGE], LARGE, InetAddress.getByName(SERVER4), PORT));
                }
                return null;
            } finally {
                sockets.forEach(DatagramSocket::close);
            }
        });
    }

    private Optional<QueueCounters> counters() throws Exception {
        return node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE));
    }

    private void awaitWaiting(int count) throws Exception {
        Optional<QueueCounters> counters = Optional.empty();
        for (int i = 0; i < 250; i++) {
            counters = counters();
            if (counters.isPresent() && counters.get().waiting() == count) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("queue " + QUEUE + " never held " + count + " packets: " + counters);
    }

    private void closeQuietly(NfQueue queue) {
        try {
            node.call(() -> {
                queue.close();
                return null;
            });
        } catch (Exception ignored) {
            // the socket is closed either way, and the kernel unbinds with it
        }
    }
}
