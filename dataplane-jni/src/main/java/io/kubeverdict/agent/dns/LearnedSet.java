package io.kubeverdict.agent.dns;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The addresses one pod learned for one domain set, each with its expiry (System.nanoTime) and
 * the name it was asked for. Written by the DNS thread, read by the verdict thread and by
 * inspection; each method holds the set's monitor briefly (uncontended in practice, and neither
 * {@link #contains} nor refreshing a known address allocates). Removal happens by
 * {@link #sweep}, which rebuilds the table without what expired.
 */
public final class LearnedSet {
    /** One learned address, for inspection. */
    public record Entry(String name, int family, long hi, long lo, long expiresAtNanos) {}

    private final int limit;
    private int[] family = new int[16]; // 0: empty slot
    private long[] hi = new long[16];
    private long[] lo = new long[16];
    private long[] expires = new long[16];
    private int[] nameOf = new int[16];
    private int size;
    private int rejected;
    // The names addresses were learned for: interned, compared as bytes (few per set).
    private final List<String> names = new ArrayList<>();
    private final List<byte[]> nameBytes = new ArrayList<>();

    /** @param limit the most addresses kept; more are not learned (counted by {@link #rejected}) */
    public LearnedSet(int limit) {
        this.limit = limit;
    }

    /** Whether the address is in the set and expires after now. */
    public synchronized boolean contains(int fam, long h, long l, long now) {
        int i = find(fam, h, l);
        return i >= 0 && expires[i] - now > 0;
    }

    /**
     * Learns the address until expiresAt (a later expiry of a known address wins; an earlier one
     * never shortens it); the name is bytes [from, from + length) of name. Returns 1 when the
     * address is new, 0 when it was known, -1 when the set is full.
     */
    public synchronized int learn(int fam, long h, long l, long expiresAt, byte[] name, int from, int length) {
        int i = find(fam, h, l);
        if (i >= 0) {
            if (expiresAt - expires[i] > 0) {
                expires[i] = expiresAt;
                nameOf[i] = intern(name, from, length);
            }
            return 0;
        }
        if (size >= limit) {
            rejected++;
            return -1;
        }
        if ((size + 1) * 2 > family.length) {
            rebuild(family.length * 2, Long.MIN_VALUE, false);
        }
        insert(fam, h, l, expiresAt, intern(name, from, length));
        return 1;
    }

    /** Removes what expired at now; returns how many remain. */
    public synchronized int sweep(long now) {
        boolean any = false;
        for (int i = 0; i < family.length && !any; i++) {
            any = family[i] != 0 && expires[i] - now <= 0;
        }
        if (any) {
            rebuild(family.length, now, true);
        }
        return size;
    }

    public synchronized int size() {
        return size;
    }

    /** Addresses not learned because the set was full. */
    public synchronized int rejected() {
        return rejected;
    }

    /** What is learned and not expired at now (allocates; inspection only). */
    public synchronized List<Entry> entries(long now) {
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < family.length; i++) {
            if (family[i] != 0 && expires[i] - now > 0) {
                out.add(new Entry(names.get(nameOf[i]), family[i], hi[i], lo[i], expires[i]));
            }
        }
        return out;
    }

    /** The name an address was learned for, if it is in the set and not expired (explanations). */
    public synchronized String nameOf(int fam, long h, long l, long now) {
        int i = find(fam, h, l);
        return i >= 0 && expires[i] - now > 0 ? names.get(nameOf[i]) : null;
    }

    private int find(int fam, long h, long l) {
        int mask = family.length - 1;
        for (int i = slot(h, l, mask); ; i = (i + 1) & mask) {
            if (family[i] == 0) {
                return -1;
            }
            if (family[i] == fam && hi[i] == h && lo[i] == l) {
                return i;
            }
        }
    }

    private void insert(int fam, long h, long l, long expiresAt, int name) {
        int mask = family.length - 1;
        int i = slot(h, l, mask);
        while (family[i] != 0) {
            i = (i + 1) & mask;
        }
        family[i] = fam;
        hi[i] = h;
        lo[i] = l;
        expires[i] = expiresAt;
        nameOf[i] = name;
        size++;
    }

    private void rebuild(int capacity, long now, boolean dropExpired) {
        int[] oldFamily = family;
        long[] oldHi = hi;
        long[] oldLo = lo;
        long[] oldExpires = expires;
        int[] oldName = nameOf;
        family = new int[capacity];
        hi = new long[capacity];
        lo = new long[capacity];
        expires = new long[capacity];
        nameOf = new int[capacity];
        size = 0;
        for (int i = 0; i < oldFamily.length; i++) {
            if (oldFamily[i] != 0 && !(dropExpired && oldExpires[i] - now <= 0)) {
                insert(oldFamily[i], oldHi[i], oldLo[i], oldExpires[i], oldName[i]);
            }
        }
    }

    private int intern(byte[] name, int from, int length) {
        for (int k = 0; k < nameBytes.size(); k++) {
            byte[] b = nameBytes.get(k);
            if (b.length == length && Arrays.equals(b, 0, length, name, from, from + length)) {
                return k;
            }
        }
        byte[] copy = Arrays.copyOfRange(name, from, from + length);
        nameBytes.add(copy);
        names.add(new String(copy, StandardCharsets.US_ASCII));
        return names.size() - 1;
    }

    private static int slot(long h, long l, int mask) {
        long x = (h * 0x9E37_79B9_7F4A_7C15L) ^ l;
        x *= 0xBF58_476D_1CE4_E5B9L;
        return (int) (x >>> 40) & mask;
    }
}
