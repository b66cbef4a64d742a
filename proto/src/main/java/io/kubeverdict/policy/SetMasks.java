// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Arrays;
import java.util.Map;

/**
 * Set number -> mask of the program's rules that name the set (as a peer, or as a named-port
 * clause). A bit per set number turns away at once the sets no rule names (most of a remote's
 * sets); the others are found in a small open-addressing table.
 */
final class SetMasks {

    private final long[] named; // bit per set number that some rule names
    private final int[] keys; // -1 = empty slot
    private final long[] masks;
    private final int slotMask;

    SetMasks(Map<Integer, Long> bySet) {
        int capacity = 4;
        while (capacity < bySet.size() * 2) {
            capacity <<= 1;
        }
        keys = new int[capacity];
        Arrays.fill(keys, -1);
        masks = new long[capacity];
        slotMask = capacity - 1;
        int maxSet = bySet.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1);
        named = new long[(maxSet >> 6) + 1];
        for (Map.Entry<Integer, Long> e : bySet.entrySet()) {
            named[e.getKey() >>> 6] |= 1L << e.getKey();
            int i = slot(e.getKey());
            while (keys[i] != -1) {
                i = (i + 1) & slotMask;
            }
            keys[i] = e.getKey();
            masks[i] = e.getValue();
        }
    }

    private int slot(int set) {
        return (set * 0x9E37_79B9 >>> 16) & slotMask;
    }

    /** The mask of rules naming this set (0 when none). */
    long get(int set) {
        int word = set >>> 6;
        if (word >= named.length || (named[word] & 1L << set) == 0) {
            return 0;
        }
        int i = slot(set);
        while (true) {
            int k = keys[i];
            if (k == set) {
                return masks[i];
            }
            if (k == -1) {
                return 0;
            }
            i = (i + 1) & slotMask;
        }
    }

    /** The OR of the masks of every set in a membership (see {@link Membership}; pool as the index's). */
    long of(int[] pool, int membership) {
        if (Membership.isInline(membership)) {
            long m = get(Membership.first(membership));
            int second = Membership.second(membership);
            return second < 0 ? m : m | get(second);
        }
        long m = 0;
        for (int i = membership + 1, end = membership + pool[membership]; i <= end; i++) {
            m |= get(pool[i]);
        }
        return m;
    }
}
