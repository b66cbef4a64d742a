// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import java.util.Arrays;

/**
 * Compile-time collector for one address table: distinct keys (hi, lo, ext) get dense indices
 * through a growable primitive hash (a HashMap of records was most of compile time at 500k
 * members), each with an optional endpoint and the (key, set) pairs of its memberships.
 */
final class KeyedMembers {

    private long[] slotHi = new long[1024];
    private long[] slotLo = new long[1024];
    private int[] slotExt = new int[1024];
    private int[] slotIndex = filled(1024);
    private int size;

    private long[] keyHi = new long[256];
    private long[] keyLo = new long[256];
    private int[] keyExt = new int[256];
    private int[] endpoint = new int[256];

    private final IntList pairKey = new IntList();
    private final IntList pairSet = new IntList();

    private static int[] filled(int n) {
        int[] a = new int[n];
        Arrays.fill(a, -1);
        return a;
    }

    int size() {
        return size;
    }

    long hi(int i) {
        return keyHi[i];
    }

    long lo(int i) {
        return keyLo[i];
    }

    int ext(int i) {
        return keyExt[i];
    }

    int endpoint(int i) {
        return endpoint[i];
    }

    void setEndpoint(int i, int value) {
        endpoint[i] = value;
    }

    void addSet(long hi, long lo, int ext, int set) {
        pairKey.add(indexOf(hi, lo, ext));
        pairSet.add(set);
    }

    /** The dense index of a key, adding it when new. */
    int indexOf(long hi, long lo, int ext) {
        int mask = slotIndex.length - 1;
        int i = AddressTable.hash(hi ^ ext, lo) & mask;
        while (slotIndex[i] != -1) {
            if (slotLo[i] == lo && slotHi[i] == hi && slotExt[i] == ext) {
                return slotIndex[i];
            }
            i = (i + 1) & mask;
        }
        int index = size++;
        slotHi[i] = hi;
        slotLo[i] = lo;
        slotExt[i] = ext;
        slotIndex[i] = index;
        if (index == keyHi.length) {
            int n = index * 2;
            keyHi = Arrays.copyOf(keyHi, n);
            keyLo = Arrays.copyOf(keyLo, n);
            keyExt = Arrays.copyOf(keyExt, n);
            endpoint = Arrays.copyOf(endpoint, n);
        }
        keyHi[index] = hi;
        keyLo[index] = lo;
        keyExt[index] = ext;
        endpoint[index] = -1;
        if (size * 2 > slotIndex.length) {
            grow();
        }
        return index;
    }

    private void grow() {
        int n = slotIndex.length * 2;
        slotHi = new long[n];
        slotLo = new long[n];
        slotExt = new int[n];
        slotIndex = filled(n);
        for (int k = 0; k < size; k++) {
            int i = AddressTable.hash(keyHi[k] ^ keyExt[k], keyLo[k]) & (n - 1);
            while (slotIndex[i] != -1) {
                i = (i + 1) & (n - 1);
            }
            slotHi[i] = keyHi[k];
            slotLo[i] = keyLo[k];
            slotExt[i] = keyExt[k];
            slotIndex[i] = k;
        }
    }

    /**
     * The set indices of every key, grouped by a counting sort of the pairs: key i's sets are
     * {@code sets[start[i] .. start[i + 1])} (unsorted, possibly repeated).
     */
    int[][] groupedSets() {
        int[] start = new int[size + 1];
        for (int p = 0; p < pairKey.size(); p++) {
            start[pairKey.get(p) + 1]++;
        }
        for (int i = 0; i < size; i++) {
            start[i + 1] += start[i];
        }
        int[] fill = Arrays.copyOf(start, size);
        int[] sets = new int[pairKey.size()];
        for (int p = 0; p < pairKey.size(); p++) {
            sets[fill[pairKey.get(p)]++] = pairSet.get(p);
        }
        return new int[][] {start, sets};
    }
}
