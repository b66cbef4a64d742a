// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.TableLayout;
import io.kubeverdict.testing.TestNamespace;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Several verdict queues on the xtables path ({@code --queue-balance A:B --queue-cpu-fanout}): each
 * queue has its own verdict loop, the kernel sends a new connection to the queue of the CPU that
 * handles its first packet, and every loop's verdicts count.
 */
@KernelTest
class MultiQueueKernelTest {
    private static final int FIRST = 140;
    private static final int QUEUES = 2;
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

    private Dataplane twoQueues() throws Exception {
        return bed.own(Dataplane.table(
                bed.node, QueuePath.XT_NFQUEUE, TableLayout.INET, FIRST, QUEUES, false, Dataplane.BOTH_PODS));
    }

    /**
     * A TCP connect from a client process pinned to one CPU; its SYN is forwarded on that CPU. It
     * gives up within 0.5 s, before the first SYN retransmission (1 s), which a timer may send
     * from another CPU.
     */
    private static boolean connectFromCpu(TestNamespace from, int cpu, String ip, int port) throws Exception {
        return from.tryExec(
                                "taskset",
                                "-c",
                                Integer.toString(cpu),
                                "timeout",
                                "0.5",
                                "bash",
                                "-c",
                                "exec 3<>/dev/tcp/" + ip + "/" + port)
                        .exitCode()
                == 0;
    }

    @Test
    void eachCpusConnectionsGoToItsOwnQueueAndEveryQueueAnswers() throws Exception {
        Assumptions.assumeTrue(Runtime.getRuntime().availableProcessors() >= QUEUES, "needs a CPU per queue");
        List<RecordingObserver> observers = List.of(new RecordingObserver(), new RecordingObserver());
        try (Dataplane dp = twoQueues()) {
            assertThat(dp.listing()).contains("queue num " + FIRST + "-" + (FIRST + QUEUES - 1));
            dp.listen(p -> p.dstPort == 80 ? 1 : 0, observers, false);
            int perCpu = 5;
            for (int cpu = 0; cpu < QUEUES; cpu++) {
                long[] before = received(dp);
                for (int i = 0; i < perCpu; i++) {
                    assertThat(connectFromCpu(bed.client, cpu, SERVER4, 80))
                            .as("cpu " + cpu + " connect " + i)
                            .isTrue();
                }
                assertThat(connectFromCpu(bed.client, cpu, SERVER4, 81))
                        .as("denied from cpu " + cpu)
                        .isFalse();
                long[] after = received(dp);
                for (int q = 0; q < QUEUES; q++) {
                    // cpu-fanout: queue FIRST + cpu % QUEUES gets all of this CPU's new connections
                    long expected = q == cpu % QUEUES ? perCpu + 1 : 0;
                    assertThat(after[q] - before[q])
                            .as("queue " + (FIRST + q) + " from cpu " + cpu)
                            .isEqualTo(expected);
                }
            }
            for (int q = 0; q < QUEUES; q++) {
                assertThat(observers.get(q).count("4/6/allow"))
                        .as("loop " + q + " allowed")
                        .isEqualTo(perCpu);
                assertThat(observers.get(q).count("4/6/deny"))
                        .as("loop " + q + " denied")
                        .isEqualTo(1);
                assertThat(observers.get(q).failures).hasValue(0);
            }
            // the kernel's own per-queue counters agree
            List<QueueCounters> kernel =
                    dp.nodeThread.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, new int[] {FIRST, FIRST + 1}));
            assertThat(kernel).extracting(QueueCounters::queue).containsExactly(FIRST, FIRST + 1);
            assertThat(kernel).allSatisfy(c -> assertThat(c.idSequence()).isGreaterThanOrEqualTo(perCpu + 1));
        }
    }

    @Test
    void manyParallelConnectionsAllGetTheirVerdictsAndCloseEndsEveryThread() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try (Dataplane dp = twoQueues()) {
            dp.listen(p -> p.dstPort == 80 ? 1 : 0, new RecordingObserver(), false);
            assertThat(liveLoopThreads())
                    .containsExactlyInAnyOrder("verdict-loop-q" + FIRST, "verdict-loop-q" + (FIRST + 1));
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 96; i++) {
                int port = i % 2 == 0 ? 80 : 81;
                String ip = i % 4 < 2 ? SERVER4 : SERVER6;
                boolean udp = i % 3 == 0;
                results.add(pool.submit(() -> udp ? Probe.udp(bed.client, ip, port) : Probe.tcp(bed.client, ip, port)));
            }
            for (int i = 0; i < results.size(); i++) {
                assertThat(results.get(i).get()).as("probe " + i).isEqualTo(i % 2 == 0);
            }
            long total = dp.queues().stream().mapToLong(q -> q.received()).sum();
            assertThat(total).as("every probe's first packet was queued once").isGreaterThanOrEqualTo(results.size());
            dp.stopListening();
            assertThat(liveLoopThreads()).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    private static long[] received(Dataplane dp) {
        long[] out = new long[dp.queues().size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = dp.queues().get(i).received();
        }
        return out;
    }

    private static List<String> liveLoopThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("verdict-loop-q" + FIRST) || n.startsWith("verdict-loop-q" + (FIRST + 1)))
                .toList();
    }
}
