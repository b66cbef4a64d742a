// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Maps each 128-bit value (an address, or a port with hi = 0) to the OR of the masks of the
 * ranges containing it, by cutting the ranges into elementary segments: a lookup is one binary
 * search however many overlapping ranges (ipBlocks of many rules, port ranges of many clauses).
 */
final class MaskMap {

    static final MaskMap EMPTY = new Builder().build();

    private final long[] startHi;
    private final long[] startLo;
    private final long[] masks;
    // Every start below 2^63 with hi == 0 (IPv4, ports): one signed compare per step.
    private final boolean narrow;

    private MaskMap(long[] startHi, long[] startLo, long[] masks) {
        this.startHi = startHi;
        this.startLo = startLo;
        this.masks = masks;
        boolean n = true;
        for (int i = 0; i < masks.length; i++) {
            n &= startHi[i] == 0 && startLo[i] >= 0;
        }
        this.narrow = n;
    }

    /** The OR of the masks of every range holding the value; 0 when none. */
    long get(long hi, long lo) {
        if (narrow) {
            return hi == 0 && lo >= 0 ? getNarrow(lo) : masks.length == 0 ? 0 : getWide(hi, lo);
        }
        return getWide(hi, lo);
    }

    /**
     * Branch-free binary search (the ternary compiles to a conditional move): the steps of a
     * search over random addresses are unpredictable, and mispredictions would dominate.
     */
    private long getNarrow(long value) {
        long[] starts = startLo;
        int n = starts.length;
        if (n == 0) {
            return 0;
        }
        int base = 0;
        while (n > 1) {
            int half = n >>> 1;
            base = starts[base + half] <= value ? base + half : base;
            n -= half;
        }
        return starts[base] <= value ? masks[base] : 0;
    }

    /** As {@link #getNarrow}, comparing (hi, lo) as one unsigned 128-bit value without branches. */
    private long getWide(long hi, long lo) {
        long[] his = startHi;
        long[] los = startLo;
        int n = his.length;
        if (n == 0) {
            return 0;
        }
        long h = hi + Long.MIN_VALUE;
        long l = lo + Long.MIN_VALUE;
        int base = 0;
        while (n > 1) {
            int half = n >>> 1;
            int mid = base + half;
            long sh = his[mid] + Long.MIN_VALUE;
            boolean atOrBelow = sh < h | (sh == h & los[mid] + Long.MIN_VALUE <= l);
            base = atOrBelow ? mid : base;
            n -= half;
        }
        long sh = his[base] + Long.MIN_VALUE;
        boolean atOrBelow = sh < h | (sh == h & los[base] + Long.MIN_VALUE <= l);
        return atOrBelow ? masks[base] : 0;
    }

    boolean isEmpty() {
        return masks.length == 0;
    }

    int segments() {
        return masks.length;
    }

    long startHi(int segment) {
        return startHi[segment];
    }

    long startLo(int segment) {
        return startLo[segment];
    }

    static final class Builder {
        private final List<long[]> ranges = new ArrayList<>(); // {startHi, startLo, endHi, endLo, mask}

        void add(long startHi, long startLo, long endHi, long endLo, long mask) {
            ranges.add(new long[] {startHi, startLo, endHi, endLo, mask});
        }

        MaskMap build() {
            List<long[]> points = new ArrayList<>();
            for (long[] r : ranges) {
                RangeSet.addBoundaries(points, r[0], r[1], r[2], r[3]);
            }
            points.sort(RangeSet.BY_ADDRESS);
            long[] hi = new long[points.size()];
            long[] lo = new long[points.size()];
            long[] masks = new long[points.size()];
            int n = 0;
            for (long[] p : points) {
                if (n > 0 && hi[n - 1] == p[0] && lo[n - 1] == p[1]) {
                    continue;
                }
                long mask = 0;
                for (long[] r : ranges) {
                    if (RangeSet.compare(r[0], r[1], p[0], p[1]) <= 0
                            && RangeSet.compare(p[0], p[1], r[2], r[3]) <= 0) {
                        mask |= r[4];
                    }
                }
                // Adjacent segments with equal masks merge into one.
                if (n > 0 && masks[n - 1] == mask) {
                    continue;
                }
                hi[n] = p[0];
                lo[n] = p[1];
                masks[n] = mask;
                n++;
            }
            return new MaskMap(Arrays.copyOf(hi, n), Arrays.copyOf(lo, n), Arrays.copyOf(masks, n));
        }
    }
}
