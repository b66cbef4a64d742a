// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.testing.dp.DpTestbed.CLIENT4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.verdict.Judge;
import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RecordingObserver;
import java.io.IOException;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Why a cut marks the conntrack entry instead of deleting it (docs/design/existing-connections.md):
 * what the kernel does with the next packet of an established TCP connection whose entry was
 * deleted, by nf_conntrack_tcp_loose. With 1 the packet makes a new entry mid-stream, in the
 * direction of whoever sent it, and our ct-state-new rule queues it; with 0 it is INVALID, no
 * rule of ours sees it, and the connection simply goes on.
 */
class MidStreamPickupKernelTest {
    private static final int QUEUE = 140;
    private DpTestbed bed;

    /** Allows everything until told otherwise; remembers what it was asked. */
    static final class SwitchJudge implements Judge {
        final List<String> asked = new CopyOnWriteArrayList<>();
        volatile boolean allow = true;

        @Override
        public int decide(PacketTuple p) {
            asked.add(p.toString());
            return allow ? 1 : 0;
        }
    }

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80);
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    /** Deletes the connection's entry through the shim (by its dumped tuple and id). */
    private void deleteEntry(Dataplane dp, int clientPort) throws Exception {
        boolean deleted = dp.nodeThread.call(() -> {
            try (Conntrack ct = new Conntrack()) {
                ConntrackEntries e = new ConntrackEntries(16);
                ct.dump(ConntrackQuery.of(IpAddress.parse(CLIENT4), ConntrackQuery.Match.ORIGINAL_SOURCE, 0, 0), e);
                for (int i = 0; i < e.size(); i++) {
                    if (e.originalSourcePort(i) == clientPort) {
                        return ct.delete(e, i);
                    }
                }
                return false;
            }
        });
        assertThat(deleted).as("the connection's entry was there and is gone").isTrue();
    }

    private static boolean roundTrip(Socket s, String text) {
        try {
            return Probe.roundTrip(s, text);
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void withTcpLooseTheNextPacketMakesANewEntryThatIsQueuedAndJudged() throws Exception {
        bed.node.exec("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_loose=1");
        SwitchJudge judge = new SwitchJudge();
        Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        dp.listen(judge, new RecordingObserver(), false);
        try (Socket s = Probe.connect(bed.client, SERVER4, 80)) {
            assertThat(roundTrip(s, "before")).isTrue();
            int judgedBefore = judge.asked.size();

            judge.allow = false; // the policy now denies it
            deleteEntry(dp, s.getLocalPort());
            assertThat(roundTrip(s, "after"))
                    .as("the picked-up packet was judged and dropped")
                    .isFalse();
            assertThat(judge.asked.size())
                    .as("a mid-stream packet reached the queue as new")
                    .isGreaterThan(judgedBefore);
            assertThat(judge.asked.get(judgedBefore))
                    .as("judged in the direction of its sender")
                    .isEqualTo(CLIENT4 + " -> " + SERVER4 + " proto 6 port 80");
        }
    }

    @Test
    void withoutTcpLooseTheNextPacketIsInvalidAndTheConnectionGoesOnUnjudged() throws Exception {
        bed.node.exec("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_loose=0");
        SwitchJudge judge = new SwitchJudge();
        Dataplane dp = bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        dp.listen(judge, new RecordingObserver(), false);
        try (Socket s = Probe.connect(bed.client, SERVER4, 80)) {
            assertThat(roundTrip(s, "before")).isTrue();
            int judgedBefore = judge.asked.size();

            judge.allow = false;
            deleteEntry(dp, s.getLocalPort());
            assertThat(roundTrip(s, "after"))
                    .as("deleting is no cut: the connection still works")
                    .isTrue();
            assertThat(judge.asked).as("nothing was queued").hasSize(judgedBefore);
        }
    }
}
