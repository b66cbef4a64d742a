package io.kubeverdict.policy;

/**
 * Open-addressing hash table from a primitive key (an IPv4 or IPv6 address, optionally with
 * protocol and port in {@code ext}) to a non-negative long. Key and value sit side by side in one
 * long[] (stride 2 when every key fits in 64 bits, as IPv4 keys do; stride 4 for IPv6), so a
 * lookup costs one cache line, not one per field. Linear probing, load at most 1/2, built once
 * and then read-only: lookups neither box nor allocate.
 */
final class AddressTable {

    static final long ABSENT = -1;

    private final boolean narrow; // IPv4: key = lo | ext << 32, hi must be 0
    private final int stride;
    private final long[] slots;
    private final int mask;
    private int size;

    /** A table for IPv4 keys (narrow) or IPv6 keys (wide). */
    AddressTable(int expected, boolean narrow) {
        int capacity = 4;
        while (capacity < expected * 2L) {
            capacity <<= 1;
        }
        this.narrow = narrow;
        this.stride = narrow ? 2 : 4;
        this.slots = new long[capacity * stride];
        for (int i = 0; i < capacity; i++) {
            slots[i * stride + stride - 1] = ABSENT;
        }
        this.mask = capacity - 1;
    }

    static int hash(long hi, long lo) {
        long h = hi * 0x9E37_79B9_7F4A_7C15L + lo;
        h *= 0xC2B2_AE3D_27D4_EB4FL;
        h ^= h >>> 29;
        h *= 0x1656_67B1_9E37_79F9L;
        return (int) (h ^ (h >>> 32));
    }

    /** Inserts or replaces; the value must be non-negative. */
    void put(long hi, long lo, int ext, long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative value");
        }
        if ((size + 1) * 2L > mask + 1) {
            throw new IllegalStateException("table sized for fewer keys");
        }
        if (narrow && (hi != 0 || (lo >>> 32) != 0)) {
            throw new IllegalArgumentException("not an IPv4 key");
        }
        long k1 = narrow ? lo | (long) ext << 32 : hi;
        long k2 = narrow ? 0 : lo;
        int i = (narrow ? hash(0, k1) : hash(k1 ^ ext, k2)) & mask;
        while (true) {
            int base = i * stride;
            if (slots[base + stride - 1] == ABSENT) {
                slots[base] = k1;
                if (!narrow) {
                    slots[base + 1] = k2;
                    slots[base + 2] = ext;
                }
                slots[base + stride - 1] = value;
                size++;
                return;
            }
            boolean same = narrow ? slots[base] == k1
                    : slots[base] == k1 && slots[base + 1] == k2 && slots[base + 2] == ext;
            if (same) {
                slots[base + stride - 1] = value;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /** The value for an IPv4 key of a narrow table, or {@link #ABSENT}. */
    long get(long v4, int ext) {
        long key = v4 | (long) ext << 32;
        long[] s = slots;
        int i = hash(0, key) & mask;
        while (true) {
            int base = i << 1;
            long v = s[base + 1];
            if (v == ABSENT || s[base] == key) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    /** The value for an IPv6 key of a wide table, or {@link #ABSENT}. */
    long get(long hi, long lo, int ext) {
        long[] s = slots;
        int i = hash(hi ^ ext, lo) & mask;
        while (true) {
            int base = i << 2;
            long v = s[base + 3];
            if (v == ABSENT || (s[base + 1] == lo && s[base] == hi && s[base + 2] == ext)) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    /** Either form, by the table's own width. */
    long lookup(long hi, long lo, int ext) {
        return narrow ? get(lo, ext) : get(hi, lo, ext);
    }

    int size() {
        return size;
    }
}
