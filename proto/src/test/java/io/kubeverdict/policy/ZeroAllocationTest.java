// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** decide() must not allocate: measured with the thread's allocation counter. */
class ZeroAllocationTest {

    @Test
    void decideAllocatesNothing() {
        var bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "needs com.sun.management.ThreadMXBean");
        var threads = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);

        SnapshotIndex index = SnapshotIndexTest.INDEX;
        List<PacketTuple> packets = Stream.concat(SnapshotIndexTest.cases(), TierEvaluationTest.cases())
                .map(a -> a.get())
                .map(a -> a.length == 6
                        ? Snapshots.packet((String) a[1], (String) a[2], (Integer) a[3], (Integer) a[4])
                        : Snapshots.packet((String) a[1], (String) a[2], Snapshots.TCP, (Integer) a[3]))
                .toList();
        PacketTuple[] array = packets.toArray(new PacketTuple[0]);
        SnapshotIndex tiers = TierEvaluationTest.INDEX;

        long sink = run(index, tiers, array, 200_000); // warm up: interpreter and JIT
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        sink += run(index, tiers, array, 2_000_000);
        long after = threads.getThreadAllocatedBytes(tid);

        assertThat(sink).isNotZero();
        // 4 million decisions; a single allocation per call would be >= 64 MB. The slack covers
        // the measuring call itself.
        assertThat(after - before).isLessThan(1024);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "admin tiers: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void decideOnALargeNodeSnapshotAllocatesNothingAndMixesVerdicts(boolean adminTiers) {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        SyntheticCluster cluster = new SyntheticCluster(7, 2048, adminTiers);
        SnapshotIndex index = SnapshotIndex.compile(cluster.snapshot);
        PacketTuple[] packets = cluster.packets.toArray(new PacketTuple[0]);

        assertThat(index.problemCount()).isZero();
        assertThat(index.endpointCount()).isEqualTo(SyntheticCluster.LOCAL_ENDPOINTS);
        assertThat(index.walkingSlots()).isZero();
        int allowed = 0;
        for (PacketTuple p : packets) {
            int code = index.decide(p);
            assertThat(index.decideByWalking(p)).isEqualTo(code);
            allowed += Decision.allowed(code) ? 1 : 0;
        }
        assertThat(allowed).isBetween(packets.length / 4, packets.length * 19 / 20);

        long sink = 0;
        for (int i = 0; i < 300_000; i++) {
            sink += index.decide(packets[i % packets.length]);
        }
        long tid = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 1_000_000; i++) {
            sink += index.decide(packets[i % packets.length]);
        }
        long after = threads.getThreadAllocatedBytes(tid);
        assertThat(sink).isNotZero();
        assertThat(after - before).isLessThan(1024);
    }

    private static long run(SnapshotIndex a, SnapshotIndex b, PacketTuple[] packets, int rounds) {
        long sum = 0;
        for (int i = 0; i < rounds; i++) {
            PacketTuple p = packets[i % packets.length];
            sum += a.decide(p) + b.decide(p);
        }
        return sum;
    }
}
