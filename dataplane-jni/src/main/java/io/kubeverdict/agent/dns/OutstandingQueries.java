// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DNS queries watching pods sent to an allowed resolver and that no answer has matched yet
 * (M5): an answer teaches only when it matches one, same flow reversed (pod address and port,
 * resolver address and port), same ID and same question (name, type, class), and the match
 * consumes the record. So a pod learns only answers to questions it asked, from the server it
 * asked, and a forged packet must guess the 16-bit ID and the port of a query in flight.
 *
 * <p>Bounded and allocation-free: fixed arrays of {@code capacity} records (names in one slab),
 * a record lives {@code lifetimeNanos}; a pod holds at most {@code perPod} (its oldest goes
 * first), the node at most {@code capacity} (the node's oldest goes first); both evictions are
 * counted. Records are chained in arrival order, which is also expiry order, node-wide and per
 * pod, so expiry and eviction are O(1); lookups go through a hash of the flow and ID. Pods are
 * the endpoint numbers of the current {@link LearnedAddressBook.View}; a new generation renumbers
 * the records it still watches and drops the others. Not thread-safe: the DNS thread's alone.
 */
final class OutstandingQueries {
    private static final int NAME_SLOT = 256;
    private static final int NONE = -1;

    private final int capacity;
    private final int perPod;
    private final long lifetimeNanos;

    // Record r: its flow, ID, question, expiry and pod (endpoint number in `bound`).
    private final int[] family;
    private final long[] podHi;
    private final long[] podLo;
    private final long[] serverHi;
    private final long[] serverLo;
    private final int[] ports; // pod port << 16 | server port
    private final int[] idTypeClass0; // id << 16 | qtype
    private final int[] qclass;
    private final long[] expires;
    private final int[] nameLength;
    private final byte[] names;
    private final int[] pod;

    // Arrival order: node-wide (older, newer) and per pod (podOlder, podNewer); free records in newer.
    private final int[] older;
    private final int[] newer;
    private final int[] podOlder;
    private final int[] podNewer;
    private final int[] bucket;
    private final int[] nextInBucket;
    private int oldest = NONE;
    private int newest = NONE;
    private int free;
    private int size;

    private LearnedAddressBook.View bound;
    private int[] podOldest = new int[0];
    private int[] podNewest = new int[0];
    private int[] podCount = new int[0];

    private final AtomicLong podEvictions = new AtomicLong();
    private final AtomicLong nodeEvictions = new AtomicLong();

    OutstandingQueries(int capacity, int perPod, long lifetimeNanos) {
        if (capacity < 1 || perPod < 1 || lifetimeNanos < 1) {
            throw new IllegalArgumentException("capacity, perPod and lifetime must be >= 1");
        }
        this.capacity = capacity;
        this.perPod = perPod;
        this.lifetimeNanos = lifetimeNanos;
        family = new int[capacity];
        podHi = new long[capacity];
        podLo = new long[capacity];
        serverHi = new long[capacity];
        serverLo = new long[capacity];
        ports = new int[capacity];
        idTypeClass0 = new int[capacity];
        qclass = new int[capacity];
        expires = new long[capacity];
        nameLength = new int[capacity];
        names = new byte[capacity * NAME_SLOT];
        pod = new int[capacity];
        older = new int[capacity];
        newer = new int[capacity];
        podOlder = new int[capacity];
        podNewer = new int[capacity];
        bucket = new int[Integer.highestOneBit(capacity * 2 - 1) << 1];
        nextInBucket = new int[capacity];
        clear();
    }

    /** Records a query of endpoint {@code endpoint} (of view); evicts to make room. */
    void record(
            LearnedAddressBook.View view,
            int endpoint,
            int fam,
            long pHi,
            long pLo,
            int podPort,
            long sHi,
            long sLo,
            int serverPort,
            int id,
            int qtype,
            int qcls,
            byte[] name,
            int from,
            int length,
            long now) {
        bind(view);
        expire(now);
        if (podCount[endpoint] >= perPod) {
            remove(podOldest[endpoint]);
            podEvictions.incrementAndGet();
        }
        if (free == NONE) {
            remove(oldest);
            nodeEvictions.incrementAndGet();
        }
        int r = free;
        free = newer[r];
        family[r] = fam;
        podHi[r] = pHi;
        podLo[r] = pLo;
        serverHi[r] = sHi;
        serverLo[r] = sLo;
        ports[r] = podPort << 16 | serverPort;
        idTypeClass0[r] = id << 16 | qtype;
        qclass[r] = qcls;
        expires[r] = now + lifetimeNanos;
        nameLength[r] = Math.min(length, NAME_SLOT);
        System.arraycopy(name, from, names, r * NAME_SLOT, nameLength[r]);
        pod[r] = endpoint;
        // node-wide and per-pod order: r is the newest
        older[r] = newest;
        newer[r] = NONE;
        if (newest != NONE) {
            newer[newest] = r;
        } else {
            oldest = r;
        }
        newest = r;
        podOlder[r] = podNewest[endpoint];
        podNewer[r] = NONE;
        if (podNewest[endpoint] != NONE) {
            podNewer[podNewest[endpoint]] = r;
        } else {
            podOldest[endpoint] = r;
        }
        podNewest[endpoint] = r;
        podCount[endpoint]++;
        int b = hash(fam, pLo, podPort, id) & (bucket.length - 1);
        nextInBucket[r] = bucket[b];
        bucket[b] = r;
        size++;
    }

    /**
     * Whether an answer from (server, serverPort) to (pod, podPort) with this ID and question
     * answers a recorded, unexpired query; if so the record is consumed.
     */
    boolean consume(
            LearnedAddressBook.View view,
            int fam,
            long pHi,
            long pLo,
            int podPort,
            long sHi,
            long sLo,
            int serverPort,
            int id,
            int qtype,
            int qcls,
            byte[] name,
            int from,
            int length,
            long now) {
        bind(view);
        expire(now);
        int p = podPort << 16 | serverPort;
        int itc = id << 16 | qtype;
        for (int r = bucket[hash(fam, pLo, podPort, id) & (bucket.length - 1)]; r != NONE; r = nextInBucket[r]) {
            if (family[r] == fam
                    && podLo[r] == pLo
                    && podHi[r] == pHi
                    && ports[r] == p
                    && idTypeClass0[r] == itc
                    && qclass[r] == qcls
                    && serverLo[r] == sLo
                    && serverHi[r] == sHi
                    && nameLength[r] == length
                    && Arrays.equals(names, r * NAME_SLOT, r * NAME_SLOT + length, name, from, from + length)) {
                remove(r);
                return true;
            }
        }
        return false;
    }

    int size() {
        return size;
    }

    /** Records a pod's newer query pushed out (it had perPod in flight). */
    long podEvictions() {
        return podEvictions.get();
    }

    /** Records the node's newer query pushed out (capacity in flight). */
    long nodeEvictions() {
        return nodeEvictions.get();
    }

    /** Drops records from their expiry on (oldest first: arrival order is expiry order). */
    private void expire(long now) {
        while (oldest != NONE && expires[oldest] - now <= 0) {
            remove(oldest);
        }
    }

    private void remove(int r) {
        // from the bucket chain (short: the table is at most half full)
        int b = hash(family[r], podLo[r], ports[r] >>> 16, idTypeClass0[r] >>> 16) & (bucket.length - 1);
        if (bucket[b] == r) {
            bucket[b] = nextInBucket[r];
        } else {
            int p = bucket[b];
            while (nextInBucket[p] != r) {
                p = nextInBucket[p];
            }
            nextInBucket[p] = nextInBucket[r];
        }
        if (older[r] != NONE) {
            newer[older[r]] = newer[r];
        } else {
            oldest = newer[r];
        }
        if (newer[r] != NONE) {
            older[newer[r]] = older[r];
        } else {
            newest = older[r];
        }
        int e = pod[r];
        if (podOlder[r] != NONE) {
            podNewer[podOlder[r]] = podNewer[r];
        } else {
            podOldest[e] = podNewer[r];
        }
        if (podNewer[r] != NONE) {
            podOlder[podNewer[r]] = podOlder[r];
        } else {
            podNewest[e] = podOlder[r];
        }
        podCount[e]--;
        newer[r] = free;
        free = r;
        size--;
    }

    /** Renumbers the records by a new generation's endpoints (allocates once per generation). */
    private void bind(LearnedAddressBook.View view) {
        if (view == bound) {
            return;
        }
        int[] keep = new int[size];
        int n = 0;
        for (int r = oldest; r != NONE; r = newer[r]) {
            keep[n++] = r;
        }
        long[] savedExpires = new long[n];
        int[] endpoints = new int[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int r = keep[i];
            int e = view.index().endpointAt(family[r], podHi[r], podLo[r]);
            if (e >= 0 && view.watches(e).length > 0) {
                keep[kept] = r;
                endpoints[kept] = e;
                savedExpires[kept] = expires[r];
                kept++;
            }
        }
        // Copy the kept records' fields aside, clear, and record them again in their order.
        int endpointCount = view.index().endpointCount();
        Object[] saved = new Object[kept];
        for (int i = 0; i < kept; i++) {
            int r = keep[i];
            saved[i] = new Object[] {
                family[r],
                podHi[r],
                podLo[r],
                ports[r],
                serverHi[r],
                serverLo[r],
                idTypeClass0[r],
                qclass[r],
                Arrays.copyOfRange(names, r * NAME_SLOT, r * NAME_SLOT + nameLength[r])
            };
        }
        bound = view;
        podOldest = new int[endpointCount];
        podNewest = new int[endpointCount];
        podCount = new int[endpointCount];
        clear();
        for (int i = 0; i < kept; i++) {
            Object[] f = (Object[]) saved[i];
            int ps = (Integer) f[3];
            int itc = (Integer) f[6];
            byte[] nm = (byte[]) f[8];
            record(
                    view,
                    endpoints[i],
                    (Integer) f[0],
                    (Long) f[1],
                    (Long) f[2],
                    ps >>> 16,
                    (Long) f[4],
                    (Long) f[5],
                    ps & 0xffff,
                    itc >>> 16,
                    itc & 0xffff,
                    (Integer) f[7],
                    nm,
                    0,
                    nm.length,
                    savedExpires[i] - lifetimeNanos);
        }
    }

    private void clear() {
        Arrays.fill(bucket, NONE);
        Arrays.fill(podOldest, NONE);
        Arrays.fill(podNewest, NONE);
        Arrays.fill(podCount, 0);
        for (int r = 0; r < capacity; r++) {
            newer[r] = r + 1 < capacity ? r + 1 : NONE;
        }
        free = 0;
        oldest = NONE;
        newest = NONE;
        size = 0;
    }

    private static int hash(int fam, long podLo, int podPort, int id) {
        long x = (podLo ^ ((long) fam << 56)) * 0x9E37_79B9_7F4A_7C15L ^ ((long) podPort << 16 | id);
        x *= 0xBF58_476D_1CE4_E5B9L;
        return (int) (x >>> 32);
    }
}
