// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Arrays;

/**
 * The judge path's cost with staged policies as a ratio to {@code decide}, paired by round: each
 * round times a slice of {@code decide} and then a slice of each {@link DecideBenchmark#decideAndStaged}
 * case back to back, so a busy machine slows both sides of a ratio alike (JMH runs its cases minutes
 * apart, which on a shared machine moves a single case by 3x). Prints the median and quartiles of
 * the per-round ratios.
 *
 * <p>Run (after {@code ./mvnw -B -q -o -pl proto -am -Pbenchmarks -DskipTests test-compile}):
 * {@code java -cp proto/target/test-classes:proto/target/classes:<protobuf-java jar>
 * io.kubeverdict.policy.StagedCostRatio [rounds]}
 */
public final class StagedCostRatio {
    private static final int[] STAGED_ENDPOINTS = {0, 10, 110};
    private static final int REPEATS = 20; // batches per slice: ~80k packets, some 10-30 ms
    private static volatile int sink;

    private StagedCostRatio() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        DecideBenchmark.Staged[] cases = new DecideBenchmark.Staged[STAGED_ENDPOINTS.length];
        for (int c = 0; c < cases.length; c++) {
            cases[c] = new DecideBenchmark.Staged();
            cases[c].stagedEndpoints = STAGED_ENDPOINTS[c];
            cases[c].setUp();
        }
        SnapshotIndex plain = cases[0].index;
        PacketTuple[] packets = cases[0].packets;
        for (int warm = 0; warm < 40; warm++) {
            decideSlice(plain, packets);
            for (DecideBenchmark.Staged s : cases) {
                judgeSlice(s.index, s.packets);
            }
        }
        double[][] ratios = new double[cases.length][rounds];
        double[] decideNs = new double[rounds];
        double[] judgeNs = new double[cases.length];
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) { // decide first in even rounds, last in odd ones: no side gains from its place
                decideNs[r] = decideSlice(plain, packets);
            }
            for (int c = 0; c < cases.length; c++) {
                judgeNs[c] = judgeSlice(cases[c].index, cases[c].packets);
            }
            if (r % 2 == 1) {
                decideNs[r] = decideSlice(plain, packets);
            }
            for (int c = 0; c < cases.length; c++) {
                ratios[c][r] = judgeNs[c] / decideNs[r];
            }
        }
        System.out.printf("decide: median %.1f ns/packet over %d rounds%n", median(decideNs), rounds);
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
        long start = System.nanoTime();
        int acc = 0;
        for (int i = 0; i < REPEATS; i++) {
            for (PacketTuple p : packets) {
                acc += index.decide(p, LearnedAddresses.NONE);
            }
        }
        sink = acc;
        return (System.nanoTime() - start) / (double) (REPEATS * packets.length);
    }

    /** ns per packet of the agent judge's path (as {@link DecideBenchmark#decideAndStaged}). */
    private static double judgeSlice(SnapshotIndex index, PacketTuple[] packets) {
        long start = System.nanoTime();
        int acc = 0;
        for (int i = 0; i < REPEATS; i++) {
            for (PacketTuple p : packets) {
                acc += DecideBenchmark.judge(index, p);
            }
        }
        sink = acc;
        return (System.nanoTime() - start) / (double) (REPEATS * packets.length);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
