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

    int get(int i) {
        return data[i];
    }

    int[] toArray() {
        return Arrays.copyOf(data, size);
    }
}
