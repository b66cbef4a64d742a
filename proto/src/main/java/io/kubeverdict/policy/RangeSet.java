// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A union of address blocks minus their excepts, as sorted disjoint 128-bit ranges (IPv4 uses
 * hi = 0), so membership is one binary search however many blocks a rule has.
 */
final class RangeSet {

    private final long[] startHi;
    private final long[] startLo;
    private final long[] endHi;
    private final long[] endLo;

    private RangeSet(List<long[]> ranges) {
        int n = ranges.size();
        startHi = new long[n];
        startLo = new long[n];
        endHi = new long[n];
        endLo = new long[n];
        for (int i = 0; i < n; i++) {
            long[] r = ranges.get(i);
            startHi[i] = r[0];
            startLo[i] = r[1];
            endHi[i] = r[2];
            endLo[i] = r[3];
        }
    }

    boolean contains(long hi, long lo) {
        int low = 0;
        int high = startHi.length - 1;
        int found = -1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (compare(startHi[mid], startLo[mid], hi, lo) <= 0) {
                found = mid;
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        return found >= 0 && compare(hi, lo, endHi[found], endLo[found]) <= 0;
    }

    int size() {
        return startHi.length;
    }

    /** Adds every range of this set, with a mask, to a MaskMap under construction. */
    void addTo(MaskMap.Builder builder, long mask) {
        for (int i = 0; i < startHi.length; i++) {
            builder.add(startHi[i], startLo[i], endHi[i], endLo[i], mask);
        }
    }

    /** Adds where each range starts and where it ends (see {@link #addBoundaries}). */
    void addBoundariesTo(List<long[]> points) {
        for (int i = 0; i < startHi.length; i++) {
            addBoundaries(points, startHi[i], startLo[i], endHi[i], endLo[i]);
        }
    }

    /**
     * Adds the points where a range [start, end] begins and stops as {hi, lo}: its start, and the
     * address after its end unless it ends the space.
     */
    static void addBoundaries(List<long[]> points, long startHi, long startLo, long endHi, long endLo) {
        points.add(new long[] {startHi, startLo});
        if (endHi != -1L || endLo != -1L) {
            points.add(new long[] {endLo == -1L ? endHi + 1 : endHi, endLo + 1});
        }
    }

    /** Orders arrays that begin with a {hi, lo} address as unsigned 128-bit values. */
    static final Comparator<long[]> BY_ADDRESS =
            Comparator.<long[]>comparingLong(a -> a[0] + Long.MIN_VALUE).thenComparingLong(a -> a[1] + Long.MIN_VALUE);

    static int compare(long aHi, long aLo, long bHi, long bLo) {
        int c = Long.compareUnsigned(aHi, bHi);
        return c != 0 ? c : Long.compareUnsigned(aLo, bLo);
    }

    /** Collects blocks of one family; each block is a cidr minus its excepts. */
    static final class Builder {
        private final List<long[]> ranges = new ArrayList<>();

        boolean isEmpty() {
            return ranges.isEmpty();
        }

        /** Adds cidr minus excepts (excepts of another family cannot overlap and are ignored). */
        void add(Cidr cidr, List<Cidr> excepts) {
            List<long[]> pieces = new ArrayList<>();
            pieces.add(new long[] {cidr.startHi(), cidr.startLo(), cidr.endHi(), cidr.endLo()});
            for (Cidr e : excepts) {
                if (e.family() != cidr.family()) {
                    continue;
                }
                List<long[]> next = new ArrayList<>();
                for (long[] p : pieces) {
                    boolean disjoint = compare(e.endHi(), e.endLo(), p[0], p[1]) < 0
                            || compare(e.startHi(), e.startLo(), p[2], p[3]) > 0;
                    if (disjoint) {
                        next.add(p);
                        continue;
                    }
                    if (compare(e.startHi(), e.startLo(), p[0], p[1]) > 0) {
                        long[] before = minusOne(e.startHi(), e.startLo());
                        next.add(new long[] {p[0], p[1], before[0], before[1]});
                    }
                    if (compare(e.endHi(), e.endLo(), p[2], p[3]) < 0) {
                        long[] after = plusOne(e.endHi(), e.endLo());
                        next.add(new long[] {after[0], after[1], p[2], p[3]});
                    }
                }
                pieces = next;
            }
            ranges.addAll(pieces);
        }

        RangeSet build() {
            List<long[]> sorted = new ArrayList<>(ranges);
            sorted.sort(BY_ADDRESS);
            List<long[]> merged = new ArrayList<>();
            for (long[] r : sorted) {
                if (!merged.isEmpty()) {
                    long[] last = merged.get(merged.size() - 1);
                    boolean lastIsMax = last[2] == -1L && last[3] == -1L;
                    long[] afterLast = lastIsMax ? null : plusOne(last[2], last[3]);
                    if (lastIsMax || compare(r[0], r[1], afterLast[0], afterLast[1]) <= 0) {
                        if (compare(r[2], r[3], last[2], last[3]) > 0) {
                            last[2] = r[2];
                            last[3] = r[3];
                        }
                        continue;
                    }
                }
                merged.add(r.clone());
            }
            return new RangeSet(merged);
        }

        private static long[] minusOne(long hi, long lo) {
            return new long[] {lo == 0 ? hi - 1 : hi, lo - 1};
        }

        private static long[] plusOne(long hi, long lo) {
            return new long[] {lo == -1L ? hi + 1 : hi, lo + 1};
        }
    }
}
