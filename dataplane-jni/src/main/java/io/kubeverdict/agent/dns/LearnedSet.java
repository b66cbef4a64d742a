// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The addresses one pod learned for one domain set, each with its expiry (System.nanoTime) and
 * the one name it was last learned for (overwritten, never accumulated: a pod resolving a million
 * distinct names through a wildcard keeps at most {@code limit} names here).
 *
 * <p>One writer, lock-free readers. {@link #learn} and {@link #sweep} are called by one thread at
 * a time (the DNS thread; tests and tools from theirs). {@link #contains} and {@link #nameOf} run
 * on verdict and inspection threads and take no lock, so the verdict thread never waits for the
 * DNS thread: the table is an open-addressing array of {@link Slot}s read with volatile
 * semantics; a slot's key is final and its expiry and name are volatile fields updated in place
 * (refreshing a known address allocates nothing); an insert only fills an empty or removed slot,
 * which never disturbs another key's probe; removals mark a slot {@link #REMOVED}, and a sweep
 * that drops expired addresses publishes a rebuilt array (copy-on-write).
 *
 * <p>Bounded twice: at most {@code limit} addresses per set, and the node-wide {@link Budget}
 * shared by every set. A new address when either is reached evicts this set's oldest-expiring
 * addresses, 1/16 of the set at once (counted in {@link #evicted} and the budget); only when this
 * set is empty and the node is full is it not learned ({@link #rejected}). One pod's flood thus
 * pushes out its own older addresses, never another pod's. Eviction scans and sorts this set on
 * the writer's thread only.
 */
public final class LearnedSet {
    /** One learned address, for inspection; the name is escaped ({@link DnsNames#printable}). */
    public record Entry(String name, int family, long hi, long lo, long expiresAtNanos) {}

    /** Node-wide count of learned addresses and its limit; evictions and rejections are counted here too. */
    public static final class Budget {
        private final long limit;
        private final java.util.concurrent.atomic.AtomicLong used = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong evictions = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicLong rejections = new java.util.concurrent.atomic.AtomicLong();

        public Budget(long limit) {
            if (limit < 1) {
                throw new IllegalArgumentException("a node-wide limit of learned addresses must be >= 1, got " + limit);
            }
            this.limit = limit;
        }

        public static Budget unlimited() {
            return new Budget(Long.MAX_VALUE);
        }

        boolean full() {
            return used.get() >= limit;
        }

        void add(long n) {
            used.addAndGet(n);
        }

        /** Resets the count to what the sets hold (the writer's sweep: sets no longer watched leave it). */
        void set(long n) {
            used.set(n);
        }

        public long used() {
            return used.get();
        }

        public long limit() {
            return limit;
        }

        /** Addresses evicted to make room (per-set or node-wide limit reached). */
        public long evictions() {
            return evictions.get();
        }

        /** Addresses not learned: the node was full and their set empty. */
        public long rejections() {
            return rejections.get();
        }
    }

    private static final class Slot {
        final int family;
        final long hi;
        final long lo;
        volatile long expires;
        volatile byte[] name;

        Slot(int family, long hi, long lo, long expires, byte[] name) {
            this.family = family;
            this.hi = hi;
            this.lo = lo;
            this.expires = expires;
            this.name = name;
        }
    }

    /** A removed slot: probes go on past it; an insert may reuse it. */
    private static final Slot REMOVED = new Slot(0, 0, 0, Long.MIN_VALUE, new byte[0]);

    private static final int MIN_CAPACITY = 16;

    private final int limit;
    private final Budget budget;
    private volatile AtomicReferenceArray<Slot> table = new AtomicReferenceArray<>(MIN_CAPACITY);
    // Written by the writer only; volatile so that size() and the counters read right anywhere.
    private volatile int size;
    private int removed; // REMOVED slots in table (writer only)
    private long[] scratch; // expiries, for eviction (writer only)
    private volatile int rejected;
    private volatile long evicted;

    /** @param limit the most addresses kept; a new one beyond evicts the oldest-expiring */
    public LearnedSet(int limit, Budget budget) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1, got " + limit);
        }
        this.limit = limit;
        this.budget = budget;
    }

    public LearnedSet(int limit) {
        this(limit, Budget.unlimited());
    }

    /** Whether the address is in the set and expires after now. Lock-free; allocates nothing. */
    public boolean contains(int fam, long h, long l, long now) {
        Slot s = find(table, fam, h, l);
        return s != null && s.expires - now > 0;
    }

    /**
     * Learns the address until expiresAt (a later expiry of a known address wins, and its name
     * then becomes this one; an earlier expiry never shortens it); the name is bytes
     * [from, from + length) of name. Returns 1 when the address is new, 0 when it was known, -1
     * when it was not learned (this set empty and the node full). Writer only.
     */
    public int learn(int fam, long h, long l, long expiresAt, byte[] name, int from, int length) {
        AtomicReferenceArray<Slot> t = table;
        Slot known = find(t, fam, h, l);
        if (known != null) {
            if (expiresAt - known.expires > 0) {
                byte[] old = known.name;
                if (!Arrays.equals(old, 0, old.length, name, from, from + length)) {
                    known.name = Arrays.copyOfRange(name, from, from + length);
                }
                known.expires = expiresAt;
            }
            return 0;
        }
        if (size >= limit || budget.full()) {
            if (size == 0) {
                rejected++;
                budget.rejections.incrementAndGet();
                return -1;
            }
            evictOldestExpiring(t);
        }
        if (size + removed + 1 > t.length() * 3 / 4) {
            // grow while live entries fill half; otherwise only clear the removed slots
            t = rebuild(size + 1 > t.length() / 2 ? t.length() * 2 : t.length(), Long.MIN_VALUE, false);
        }
        insert(t, new Slot(fam, h, l, expiresAt, Arrays.copyOfRange(name, from, from + length)));
        size++;
        budget.add(1);
        return 1;
    }

    /** Removes what expired at now; returns how many remain. Writer only. */
    public int sweep(long now) {
        AtomicReferenceArray<Slot> t = table;
        boolean any = false;
        for (int i = 0; i < t.length() && !any; i++) {
            Slot s = t.get(i);
            any = s != null && s != REMOVED && s.expires - now <= 0;
        }
        if (any) {
            int before = size;
            rebuild(t.length(), now, true);
            budget.add(size - before);
        }
        return size;
    }

    public int size() {
        return size;
    }

    /** Addresses not learned because this set was empty and the node full. */
    public int rejected() {
        return rejected;
    }

    /** Addresses evicted from this set to make room for newer ones. */
    public long evicted() {
        return evicted;
    }

    /** Bytes of names held over every address in the set, expired or not (tests, inspection). */
    public long nameBytesHeld() {
        AtomicReferenceArray<Slot> t = table;
        long n = 0;
        for (int i = 0; i < t.length(); i++) {
            Slot s = t.get(i);
            n += s == null || s == REMOVED ? 0 : s.name.length;
        }
        return n;
    }

    /** What is learned and not expired at now (allocates; inspection only). */
    public List<Entry> entries(long now) {
        AtomicReferenceArray<Slot> t = table;
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < t.length(); i++) {
            Slot s = t.get(i);
            long expires = s == null ? 0 : s.expires;
            if (s != null && s != REMOVED && expires - now > 0) {
                out.add(new Entry(DnsNames.printable(s.name), s.family, s.hi, s.lo, expires));
            }
        }
        return out;
    }

    /** The name an address was learned for (escaped), if it is in the set and not expired (explanations). */
    public String nameOf(int fam, long h, long l, long now) {
        Slot s = find(table, fam, h, l);
        return s != null && s.expires - now > 0 ? DnsNames.printable(s.name) : null;
    }

    private static Slot find(AtomicReferenceArray<Slot> t, int fam, long h, long l) {
        int mask = t.length() - 1;
        for (int i = slot(h, l, mask), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            Slot s = t.get(i);
            if (s == null) {
                return null;
            }
            if (s.family == fam && s.hi == h && s.lo == l && s != REMOVED) {
                return s;
            }
        }
        return null;
    }

    /**
     * Makes room: removes the oldest-expiring 1/16 of the set (at least one address), so a pod
     * flooding new addresses costs one scan and sort per size/16 answers, not a scan per answer.
     */
    private void evictOldestExpiring(AtomicReferenceArray<Slot> t) {
        int k = Math.max(1, size / 16);
        if (scratch == null || scratch.length < size) {
            scratch = new long[Math.max(size, 16)]; // once per set that fills up
        }
        int n = 0;
        for (int i = 0; i < t.length(); i++) {
            Slot s = t.get(i);
            if (s != null && s != REMOVED) {
                scratch[n++] = s.expires;
            }
        }
        Arrays.sort(scratch, 0, n);
        long threshold = scratch[k - 1];
        int evictedNow = 0;
        for (int i = 0; i < t.length() && evictedNow < k; i++) {
            Slot s = t.get(i);
            if (s != null && s != REMOVED && s.expires <= threshold) {
                t.set(i, REMOVED);
                evictedNow++;
            }
        }
        size -= evictedNow;
        removed += evictedNow;
        budget.add(-evictedNow);
        evicted += evictedNow;
        budget.evictions.addAndGet(evictedNow);
    }

    /** Puts a key known to be absent into the first empty or removed slot of its probe. */
    private void insert(AtomicReferenceArray<Slot> t, Slot slot) {
        int mask = t.length() - 1;
        int i = slot(slot.hi, slot.lo, mask);
        for (Slot s = t.get(i); s != null && s != REMOVED; s = t.get(i)) {
            i = (i + 1) & mask;
        }
        if (t.get(i) == REMOVED) {
            removed--;
        }
        t.set(i, slot);
    }

    /** A new array with the live (and, if dropExpired, unexpired) slots, published; returns it. */
    private AtomicReferenceArray<Slot> rebuild(int capacity, long now, boolean dropExpired) {
        AtomicReferenceArray<Slot> old = table;
        AtomicReferenceArray<Slot> fresh = new AtomicReferenceArray<>(capacity);
        int kept = 0;
        removed = 0;
        for (int i = 0; i < old.length(); i++) {
            Slot s = old.get(i);
            if (s != null && s != REMOVED && !(dropExpired && s.expires - now <= 0)) {
                insert(fresh, s);
                kept++;
            }
        }
        size = kept;
        table = fresh;
        return fresh;
    }

    private static int slot(long h, long l, int mask) {
        long x = (h * 0x9E37_79B9_7F4A_7C15L) ^ l;
        x *= 0xBF58_476D_1CE4_E5B9L;
        return (int) (x >>> 40) & mask;
    }
}
