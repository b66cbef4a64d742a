// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.metrics.PolicyVerdictMetrics;
import io.kubeverdict.agent.metrics.VerdictMetrics;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.tier.KernelTest;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/**
 * The whole verdict thread — {@code PacketBatch} receive (one recvmmsg), parse, the agent's judge
 * (state, verdict feed, policy counters), the metrics, the verdicts' sendmsg — allocates nothing
 * per packet, measured on the loop's own thread while real packets pass through a real queue.
 * Companion of HotPathAllocationTest (which covers the judge and metrics without a kernel).
 */
@KernelTest
class VerdictLoopAllocationKernelTest {
    private static final int QUEUE = 150;
    private static final int FLOWS = 3000;

    @Test
    void theVerdictThreadAllocatesNothingPerPacket() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        StateHolder state = new StateHolder(0);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.allowFromB(), 1);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (DpTestbed bed = DpTestbed.create();
                VerdictFeed feed = new VerdictFeed(1024, state::generation);
                Dataplane dp = Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS);
                NetnsThread client = new NetnsThread(bed.client.path())) {
            ObservedJudge judge = new ObservedJudge(
                    state,
                    feed.producer(),
                    new PolicyVerdictMetrics(registry, 10),
                    new io.kubeverdict.agent.metrics.StagedVerdictMetrics(registry, 10));
            dp.listen(judge, new VerdictMetrics(registry), false);
            Thread loop = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("verdict-loop-q" + QUEUE))
                    .findFirst()
                    .orElseThrow();

            sendFlows(client, dp, FLOWS); // warm up: JIT, meters' lazily built structures, first batches
            long before = threads.getThreadAllocatedBytes(loop.getId());
            sendFlows(client, dp, FLOWS);
            long allocated = threads.getThreadAllocatedBytes(loop.getId()) - before;
            // idle receive timeouts and timer ring rotation may take a few hundred bytes; per-packet
            // (or per-batch) allocation would be hundreds of kilobytes
            assertThat(allocated)
                    .as("bytes the verdict thread allocated for " + FLOWS + " queued packets")
                    .isLessThan(16 * 1024);
        } finally {
            registry.close();
        }
    }

    /** FLOWS new UDP flows (one datagram each, from a new source port) from the client pod to the server pod. */
    private static void sendFlows(NetnsThread client, Dataplane dp, int flows) throws Exception {
        long target = dp.queue().received() + flows;
        client.call(() -> {
            ByteBuffer one = ByteBuffer.allocate(1);
            for (int i = 0; i < flows; i++) {
                try (DatagramChannel c = DatagramChannel.open()) {
                    c.send(one.clear(), new InetSocketAddress(SERVER4, 9));
                }
            }
            return null;
        });
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (dp.queue().received() < target && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(dp.queue().received())
                .as("every flow's first packet reached the queue")
                .isGreaterThanOrEqualTo(target);
    }
}
