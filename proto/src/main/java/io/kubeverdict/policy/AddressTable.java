// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

/**
 * Open-addressing hash table from a primitive key (an IPv4 or IPv6 address, optionally with
 * protocol and port in {@code ext}) to a non-negative long. Key and value sit side by side (stride
 * 2 when every key fits in 64 bits, as IPv4 keys do; stride 4 for IPv6), so a lookup costs one
 * cache line, not one per field. Linear probing, load at most 1/2 when built; lookups neither box
 * nor allocate.
 *
 * <p>The slots live in 4 KiB pages, so that a change of a few keys is a copy of the pages it
 * touches: {@link #edit} returns an {@link Editor} whose table shares every untouched page with
 * this one, which is never written again once it is read by a published index (copy on write).
 * Keys are never removed; a key whose value becomes 0 reads as "no endpoint, no sets", the same
 * as an absent one. A table accepts new keys up to a load of {@link #MAX_LOAD_PERCENT}% so that
 * probe chains stay short; beyond it the caller rebuilds from scratch.
 */
final class AddressTable {

    static final long ABSENT = -1;
    static final int MAX_LOAD_PERCENT = 62;
    private static final int PAGE_SHIFT = 9; // 512 longs per page
    private static final int PAGE_LONGS = 1 << PAGE_SHIFT;
    private static final int PAGE_MASK = PAGE_LONGS - 1;

    private final boolean narrow; // IPv4: key = lo | ext << 32, hi must be 0
    private final int strideShift; // 1: stride 2, 2: stride 4 (a stride always divides a page)
    private final long[][] pages;
    private final int mask;
    private final int shift; // 64 - log2(capacity): a slot is the top bits of the mixed key
    private int size;

    /** A table for IPv4 keys (narrow) or IPv6 keys (wide), sized for {@code expected} keys at load 1/2. */
    AddressTable(int expected, boolean narrow) {
        int capacity = 4;
        while (capacity < expected * 2L) {
            capacity <<= 1;
        }
        this.narrow = narrow;
        this.strideShift = narrow ? 1 : 2;
        int longs = capacity << strideShift;
        int pageLongs = Math.min(PAGE_LONGS, longs);
        this.pages = new long[(longs + pageLongs - 1) / pageLongs][];
        for (int p = 0; p < pages.length; p++) {
            long[] page = new long[pageLongs];
            for (int v = (1 << strideShift) - 1; v < pageLongs; v += 1 << strideShift) {
                page[v] = ABSENT;
            }
            pages[p] = page;
        }
        this.mask = capacity - 1;
        this.shift = 64 - Integer.numberOfTrailingZeros(capacity);
    }

    private AddressTable(AddressTable base, long[][] pages, int size) {
        this.narrow = base.narrow;
        this.strideShift = base.strideShift;
        this.pages = pages;
        this.mask = base.mask;
        this.shift = base.shift;
        this.size = size;
    }

    /**
     * The home slot of a key: the top bits of one multiply (two for IPv6), which spread runs of
     * consecutive addresses evenly; cheaper than {@link #hash} on the hot path.
     */
    private int slot(long k1, long k2) {
        return (int) (((k1 * 0x9E37_79B9_7F4A_7C15L) ^ k2) * 0xC2B2_AE3D_27D4_EB4FL >>> shift);
    }

    private int slot(long key) {
        return (int) (key * 0x9E37_79B9_7F4A_7C15L >>> shift);
    }

    /** A full 64-bit mix (compile-time hashing of keys, {@link KeyedMembers}). */
    static int hash(long hi, long lo) {
        long h = hi * 0x9E37_79B9_7F4A_7C15L + lo;
        h *= 0xC2B2_AE3D_27D4_EB4FL;
        h ^= h >>> 29;
        h *= 0x1656_67B1_9E37_79F9L;
        return (int) (h ^ (h >>> 32));
    }

    /** Inserts or replaces while the table is being built (before any reader sees it); value non-negative. */
    void put(long hi, long lo, int ext, long value) {
        if (!put(pages, null, hi, lo, ext, value, 50)) {
            throw new IllegalStateException("table sized for fewer keys");
        }
    }

    /**
     * Writes one key into {@code into}; copies a page first when {@code owned} says it is still
     * shared. False (nothing written) when a new key would pass {@code maxLoadPercent}.
     */
    private boolean put(long[][] into, boolean[] owned, long hi, long lo, int ext, long value, int maxLoadPercent) {
        if (value < 0) {
            throw new IllegalArgumentException("negative value");
        }
        if (narrow && (hi != 0 || (lo >>> 32) != 0)) {
            throw new IllegalArgumentException("not an IPv4 key");
        }
        long k1 = narrow ? lo | (long) ext << 32 : hi;
        long k2 = narrow ? 0 : lo;
        int last = (1 << strideShift) - 1;
        int i = narrow ? slot(k1) : slot(k1 ^ ext, k2);
        while (true) {
            int pos = i << strideShift;
            long[] page = into[pos >>> PAGE_SHIFT];
            int at = pos & PAGE_MASK;
            boolean empty = page[at + last] == ABSENT;
            boolean same =
                    !empty && (narrow ? page[at] == k1 : page[at] == k1 && page[at + 1] == k2 && page[at + 2] == ext);
            if (empty || same) {
                if (empty && (size + 1) * 100L > (long) (mask + 1) * maxLoadPercent) {
                    return false;
                }
                if (owned != null && !owned[pos >>> PAGE_SHIFT]) {
                    page = into[pos >>> PAGE_SHIFT] = page.clone();
                    owned[pos >>> PAGE_SHIFT] = true;
                }
                if (empty) {
                    page[at] = k1;
                    if (!narrow) {
                        page[at + 1] = k2;
                        page[at + 2] = ext;
                    }
                    size++;
                }
                page[at + last] = value;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /** The value for an IPv4 key of a narrow table, or {@link #ABSENT}. */
    long get(long v4, int ext) {
        long key = v4 | (long) ext << 32;
        long[][] p = pages;
        int i = slot(key);
        while (true) {
            int pos = i << 1;
            long[] page = p[pos >>> PAGE_SHIFT];
            int at = pos & PAGE_MASK;
            long v = page[at + 1];
            if (v == ABSENT || page[at] == key) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    /** The value for an IPv6 key of a wide table, or {@link #ABSENT}. */
    long get(long hi, long lo, int ext) {
        long[][] p = pages;
        int i = slot(hi ^ ext, lo);
        while (true) {
            int pos = i << 2;
            long[] page = p[pos >>> PAGE_SHIFT];
            int at = pos & PAGE_MASK;
            long v = page[at + 3];
            if (v == ABSENT || (page[at + 1] == lo && page[at] == hi && page[at + 2] == ext)) {
                return v;
            }
            i = (i + 1) & mask;
        }
    }

    /** Either form, by the table's own width. */
    long lookup(long hi, long lo, int ext) {
        return narrow ? get(lo, ext) : get(hi, lo, ext);
    }

    /** Keys held, including those whose value became 0. */
    int size() {
        return size;
    }

    /** A copy-on-write editor: the table it builds shares every page this one has and it does not write. */
    Editor edit() {
        return new Editor();
    }

    /** Changes keys of a copy of the table; this table is never written. One writer. */
    final class Editor {
        private final long[][] copy = pages.clone();
        private final boolean[] owned = new boolean[pages.length];
        private final AddressTable result = new AddressTable(AddressTable.this, copy, size);

        /** The value as the edited table holds it now, or {@link #ABSENT}. */
        long lookup(long hi, long lo, int ext) {
            return result.lookup(hi, lo, ext);
        }

        /** Inserts or replaces; false (nothing changed) when a new key would pass the load limit. */
        boolean put(long hi, long lo, int ext, long value) {
            return result.put(copy, owned, hi, lo, ext, value, MAX_LOAD_PERCENT);
        }

        /** The edited table; the editor must not be used afterwards. */
        AddressTable table() {
            return result;
        }
    }
}
