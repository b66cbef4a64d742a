// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The elementary segments that every ipBlock range of one family's rules cuts the address space
 * into, numbered in address order: within a segment, each rule's blocks either hold every address
 * or none. An address table entry records its address's segment ({@link AddressEntry}), so a
 * program answers "which rules' blocks hold the remote" with one array read
 * ({@link Program#blocksHolding}) instead of a search of its ranges.
 *
 * <p>Made at a full compile from the rules of that moment and kept, unchanged, by every index
 * updated from it, so the numbers already written into the tables stay meaningful. Rules that
 * come later may cut a segment further: a program whose ranges do not fall on these segments
 * gets no array and searches, as it would without segments. Past {@link #MAX_SEGMENTS} (many
 * thousands of CIDRs) nothing is numbered and every program searches.
 */
final class BlockSegments {

    /**
     * The most segments numbered: each program with blocks holds a long per segment and family
     * (8 KiB at most), beyond which the arrays would cost more memory than the search costs time.
     */
    static final int MAX_SEGMENTS = 1024;

    static final BlockSegments NONE = new BlockSegments(new long[0], new long[0]);

    private final long[] startHi;
    private final long[] startLo;

    private BlockSegments(long[] startHi, long[] startLo) {
        this.startHi = startHi;
        this.startLo = startLo;
    }

    /** The segments of the ranges of these rules' blocks (null entries: rules without blocks of the family). */
    static BlockSegments of(RangeSet[] ruleBlocks) {
        List<long[]> points = new ArrayList<>();
        points.add(new long[] {0, 0});
        for (RangeSet blocks : ruleBlocks) {
            if (blocks != null) {
                blocks.addBoundariesTo(points);
            }
        }
        points.sort(RangeSet.BY_ADDRESS);
        long[] hi = new long[points.size()];
        long[] lo = new long[points.size()];
        int n = 0;
        for (long[] p : points) {
            if (n > 0 && hi[n - 1] == p[0] && lo[n - 1] == p[1]) {
                continue;
            }
            if (n == MAX_SEGMENTS) {
                return NONE;
            }
            hi[n] = p[0];
            lo[n] = p[1];
            n++;
        }
        // One segment (no blocks at all) tells nothing a search would not: number nothing.
        return n == 1 ? NONE : new BlockSegments(Arrays.copyOf(hi, n), Arrays.copyOf(lo, n));
    }

    int count() {
        return startHi.length;
    }

    /** The number of the segment holding the address, or {@link AddressEntry#NO_SEGMENT} when none are numbered. */
    int of(long hi, long lo) {
        if (startHi.length == 0) {
            return AddressEntry.NO_SEGMENT;
        }
        int low = 0;
        int high = startHi.length - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (RangeSet.compare(startHi[mid], startLo[mid], hi, lo) <= 0) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * Each segment's mask in the map, when every segment lies within one of the map's (every start
     * of the map is a segment start); else null, and the program searches the map.
     */
    long[] masksOf(MaskMap map) {
        if (startHi.length == 0 || map.isEmpty()) {
            return null;
        }
        for (int i = 0; i < map.segments(); i++) {
            int s = of(map.startHi(i), map.startLo(i));
            if (startHi[s] != map.startHi(i) || startLo[s] != map.startLo(i)) {
                return null;
            }
        }
        long[] masks = new long[startHi.length];
        for (int s = 0; s < masks.length; s++) {
            masks[s] = map.get(startHi[s], startLo[s]);
        }
        return masks;
    }
}
