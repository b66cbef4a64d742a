// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Arrays;

/**
 * The sorted IP-set membership lists the address tables point at: at an offset, a count followed
 * by that many set indices in ascending order; offset 0 is the empty list. Append-only and shared
 * by an index and the indexes updated from it: an update appends the lists it needs after
 * everything any generation points at, so what a published index reads is never written again
 * (lists that no table points at any more are left as garbage until the next full compile).
 * One writer (whoever updates indexes); a reader only reads the array its index was built with.
 */
final class MembershipPool {

    private int[] data;
    private int size;
    /** The size at the last full compile: what garbage is measured against. */
    private final int compiledSize;

    /** A pool whose first {@code size} ints are the compiled lists; the rest of the array is room to append. */
    MembershipPool(int[] compiled, int size) {
        data = compiled;
        this.size = size;
        compiledSize = size;
    }

    /** The array holding every list appended so far (readers index it by offset). */
    int[] array() {
        return data;
    }

    /** Appends the sorted list {@code sets[0..n)}; returns its offset (0 for an empty list). */
    int append(int[] sets, int n) {
        if (n == 0) {
            return 0;
        }
        if (size + n + 1 > data.length) {
            data = Arrays.copyOf(data, Math.max(data.length * 2, size + n + 1));
        }
        int offset = size;
        data[size++] = n;
        System.arraycopy(sets, 0, data, size, n);
        size += n;
        return offset;
    }

    /** Ints appended since the full compile. */
    int appended() {
        return size - compiledSize;
    }

    int compiledSize() {
        return compiledSize;
    }
}
