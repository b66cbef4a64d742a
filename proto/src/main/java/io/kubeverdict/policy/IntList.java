// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Arrays;

/** A growable int array for building the index (compile time only). */
final class IntList {
    private int[] data = new int[16];
    private int size;

    void add(int v) {
        if (size == data.length) {
            data = Arrays.copyOf(data, size * 2);
        }
        data[size++] = v;
    }

    int size() {
        return size;
    }

    /** Drops the values from index size on. */
    void truncate(int size) {
        if (size < 0 || size > this.size) {
            throw new IndexOutOfBoundsException(size);
        }
        this.size = size;
    }

    int get(int i) {
        return data[i];
    }

    boolean contains(int v) {
        for (int i = 0; i < size; i++) {
            if (data[i] == v) {
                return true;
            }
        }
        return false;
    }

    int[] toArray() {
        return Arrays.copyOf(data, size);
    }
}
