// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * The judge path's cost with staged policies as a ratio to {@code decide}, paired by round: each
 * round times, for each {@link DecideBenchmark#decideAndStaged} case, a slice of the agent judge's
 * path and a slice of {@code decide} on the same index back to back, by the thread's CPU time, so a
 * busy machine slows both sides of a ratio alike and waits are not charged (JMH runs its cases
 * minutes apart by wall time, which on a shared machine moves a single case by 3x). Prints the
 * median and quartiles of the per-round ratios.
 *
 * <p>Run (after {@code ./mvnw -B -q -o -pl proto -am -Pbenchmarks -DskipTests test-compile}):
 * {@code java -cp proto/target/test-classes:proto/target/classes:<protobuf-java jar>
 * io.kubeverdict.policy.StagedCostRatio [rounds]}
 */
public final class StagedCostRatio {
    private static final int[] STAGED_ENDPOINTS = {0, 10, 110};
    private static final int REPEATS = 20; // batches per slice: ~80k packets, some 10-30 ms
    private static volatile int sink;
    // CPU time of this thread, not wall time: a slice the machine's other work preempts is not charged for the wait
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private StagedCostRatio() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        DecideBenchmark.Staged[] cases = new DecideBenchmark.Staged[STAGED_ENDPOINTS.length];
        for (int c = 0; c < cases.length; c++) {
            cases[c] = new DecideBenchmark.Staged();
            cases[c].stagedEndpoints = STAGED_ENDPOINTS[c];
            cases[c].setUp();
        }
        for (int warm = 0; warm < 40; warm++) {
            for (DecideBenchmark.Staged s : cases) {
                decideSlice(s.index, s.packets);
                judgeSlice(s.index, s.packets);
            }
        }
        double[][] ratios = new double[cases.length][rounds];
        double[] decideNs = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            for (int c = 0; c < cases.length; c++) {
                // the same index both ways, decide first in even rounds and last in odd ones
                DecideBenchmark.Staged s = cases[c];
                double decide = r % 2 == 0 ? decideSlice(s.index, s.packets) : 0;
                double judge = judgeSlice(s.index, s.packets);
                decide = r % 2 == 0 ? decide : decideSlice(s.index, s.packets);
                ratios[c][r] = judge / decide;
                if (c == 0) {
                    decideNs[r] = decide;
                }
            }
        }
        System.out.printf("decide: median %.1f ns (thread CPU) per packet over %d rounds%n", median(decideNs), rounds);
        for (int c = 0; c < cases.length; c++) {
            double[] sorted = ratios[c].clone();
            Arrays.sort(sorted);
            System.out.printf(
                    "judge path, %3d of 110 endpoints staged: ratio to decide median %.3f (quartiles %.3f..%.3f)%n",
                    STAGED_ENDPOINTS[c], sorted[rounds / 2], sorted[rounds / 4], sorted[rounds * 3 / 4]);
        }
    }

    /** ns per packet of decide alone. */
    private static double decideSlice(SnapshotIndex index, PacketTuple[] packets) {
        long start = THREADS.getCurrentThreadCpuTime();
        int acc = 0;
        for (int i = 0; i < REPEATS; i++) {
            for (PacketTuple p : packets) {
                acc += index.decide(p, LearnedAddresses.NONE);
            }
        }
        sink = acc;
        return (THREADS.getCurrentThreadCpuTime() - start) / (double) (REPEATS * packets.length);
    }

    /** ns per packet of the agent judge's path (as {@link DecideBenchmark#decideAndStaged}). */
    private static double judgeSlice(SnapshotIndex index, PacketTuple[] packets) {
        long start = THREADS.getCurrentThreadCpuTime();
        int acc = 0;
        for (int i = 0; i < REPEATS; i++) {
            for (PacketTuple p : packets) {
                acc += DecideBenchmark.judge(index, p);
            }
        }
        sink = acc;
        return (THREADS.getCurrentThreadCpuTime() - start) / (double) (REPEATS * packets.length);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
