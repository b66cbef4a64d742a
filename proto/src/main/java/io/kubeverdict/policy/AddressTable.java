package io.kubeverdict.policy;

/**
 * Open-addressing hash table from a primitive key (up to two longs and an int: an IPv4 or IPv6
 * address, optionally with protocol and port) to a non-negative long. Linear probing, load at
 * most 1/2, built once and then read-only: lookups neither box nor allocate.
 */
final class AddressTable {

    static final long ABSENT = -1;

    private final long[] keyHi;
    private final long[] keyLo;
    private final int[] keyExt;
    private final long[] values;
    private final int mask;
    private int size;

    AddressTable(int expected) {
        int capacity = 4;
        while (capacity < expected * 2L) {
            capacity <<= 1;
        }
        keyHi = new long[capacity];
        keyLo = new long[capacity];
        keyExt = new int[capacity];
        values = new long[capacity];
        java.util.Arrays.fill(values, ABSENT);
        mask = capacity - 1;
    }

    static int hash(long hi, long lo, int ext) {
        long h = hi * 0x9E37_79B9_7F4A_7C15L + lo;
        h = (h ^ ext) * 0xC2B2_AE3D_27D4_EB4FL;
        h ^= h >>> 29;
        h *= 0x1656_67B1_9E37_79F9L;
        return (int) (h ^ (h >>> 32));
    }

    /** Inserts or replaces; the value must be non-negative. */
    void put(long hi, long lo, int ext, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative value");
        }
        if ((size + 1) * 2L > values.length) {
            throw new IllegalStateException("table sized for fewer keys");
        }
        int i = hash(hi, lo, ext) & mask;
        while (values[i] != ABSENT) {
            if (keyHi[i] == hi && keyLo[i] == lo && keyExt[i] == ext) {
                values[i] = value;
                return;
            }
            i = (i + 1) & mask;
        }
        keyHi[i] = hi;
        keyLo[i] = lo;
        keyExt[i] = ext;
        values[i] = value;
        size++;
    }

    /** The value, or {@link #ABSENT}. */
    long get(long hi, long lo, int ext) {
        int i = hash(hi, lo, ext) & mask;
        while (true) {
            long v = values[i];
            if (v == ABSENT || (keyLo[i] == lo && keyHi[i] == hi && keyExt[i] == ext)) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    int size() {
        return size;
    }
}
