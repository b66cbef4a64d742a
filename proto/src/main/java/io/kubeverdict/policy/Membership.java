// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * An address's IP-set membership as one int, the low half of its address-table value. Most
 * addresses belong to one or two sets: those carry the set numbers inline (negative: bit 31, then
 * 15 bits per set, stored plus one; zero bits = no second set), so the hot path reads no second
 * cache line for them. Longer lists, and set numbers beyond {@link #MAX_INLINE_SET}, live in the
 * {@link MembershipPool} (non-negative: the offset of a count followed by the sorted sets; 0 is the
 * empty list).
 */
final class Membership {

    static final int EMPTY = 0;
    /** Never a membership (inline needs a first set): "not looked up yet". */
    static final int UNKNOWN = Integer.MIN_VALUE;

    static final int MAX_INLINE_SET = 0x7FFE;

    private Membership() {}

    static boolean isInline(int m) {
        return m < 0;
    }

    /** The first (smaller) inline set. */
    static int first(int m) {
        return (m & 0x7FFF) - 1;
    }

    /** The second inline set, or -1. */
    static int second(int m) {
        return ((m >>> 15) & 0x7FFF) - 1;
    }

    static boolean contains(int[] pool, int m, int set) {
        if (m < 0) {
            return set == first(m) || set == second(m) && set >= 0;
        }
        int low = m + 1;
        int high = m + pool[m];
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int v = pool[mid];
            if (v < set) {
                low = mid + 1;
            } else if (v > set) {
                high = mid - 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** Copies the sorted list into {@code out} (at least {@link #size} long); returns its length. */
    static int copy(int[] pool, int m, int[] out) {
        if (m < 0) {
            out[0] = first(m);
            int b = second(m);
            if (b < 0) {
                return 1;
            }
            out[1] = b;
            return 2;
        }
        int n = pool[m];
        System.arraycopy(pool, m + 1, out, 0, n);
        return n;
    }

    static int size(int[] pool, int m) {
        return m < 0 ? (second(m) < 0 ? 1 : 2) : pool[m];
    }

    /** The inline form of a sorted list, or 0 when it does not fit inline (empty, longer than two, big numbers). */
    static int inline(int[] sorted, int n) {
        if (n == 0 || n > 2 || sorted[n - 1] > MAX_INLINE_SET) {
            return 0;
        }
        int b = n == 2 ? sorted[1] + 1 : 0;
        return Integer.MIN_VALUE | b << 15 | (sorted[0] + 1);
    }

    /** The int of a sorted list: inline when it fits, else appended to the pool. */
    static int of(int[] sorted, int n, MembershipPool pool) {
        if (n == 0) {
            return EMPTY;
        }
        int m = inline(sorted, n);
        return m != 0 ? m : pool.append(sorted, n);
    }
}
