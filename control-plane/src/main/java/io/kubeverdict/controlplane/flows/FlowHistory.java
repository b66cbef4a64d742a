// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The flow history, pure (the caller passes the time): verdicts aggregated into records per flow
 * key and time bucket, kept for a window and capped in records and approximate bytes. Buckets are
 * half-open [start, start + width); a bucket leaves whole when its end is older than the window,
 * and when a cap is hit the oldest buckets go first. A new flow that would still exceed a cap
 * with only its own bucket left is dropped and counted; flows already held keep counting.
 */
public final class FlowHistory {
    /** @param maxBytes approximate heap bytes of the records (keys, strings, counters) */
    public record Limits(Duration window, Duration bucket, int maxRecords, long maxBytes) {
        public Limits {
            if (bucket.toMillis() < 1 || window.compareTo(bucket) < 0) {
                throw new IllegalArgumentException(
                        "the flow history's bucket must be at least 1ms and at most the window (" + window + ")");
            }
            if (maxRecords < 1 || maxBytes < 1) {
                throw new IllegalArgumentException("the flow history's caps must be positive");
            }
        }
    }

    /** One verdict to record: its key, when it was decided, and the pods and addresses it was between. */
    public record Observation(
            FlowKey key,
            long timeMillis,
            String sourcePod,
            String sourceIp,
            String destinationPod,
            String destinationIp) {}

    /** A record as held: counts and times of one key in one bucket; the pods and addresses last seen. */
    public record Held(
            FlowKey key,
            long bucketStart,
            long count,
            long firstSeen,
            long lastSeen,
            String sourcePod,
            String sourceIp,
            String destinationPod,
            String destinationIp) {}

    private static final long ENTRY_BYTES = 160; // the entry, its map node and the counters

    private final Limits limits;
    private final long width;
    private final TreeMap<Long, Map<FlowKey, Entry>> buckets = new TreeMap<>();
    private int records;
    private long bytes;
    private long dropped;
    private long evicted;
    private long expired;
    /** Buckets starting before it were handed out whole by {@link #unexported}; later changes to them are listed. */
    private long handedOutBefore = Long.MIN_VALUE;

    private final TreeSet<Long> changedAfterHandedOut = new TreeSet<>();

    private static final class Entry {
        long count;
        long first;
        long last;
        String sourcePod;
        String sourceIp;
        String destinationPod;
        String destinationIp;
        long exported; // of count, handed out by unexported()
        final long bytes;

        Entry(long bytes) {
            this.bytes = bytes;
        }
    }

    public FlowHistory(Limits limits) {
        this.limits = limits;
        this.width = limits.bucket().toMillis();
    }

    public Limits limits() {
        return limits;
    }

    /** The start of the bucket that holds this time. */
    public long bucketOf(long timeMillis) {
        return Math.floorDiv(timeMillis, width) * width;
    }

    /** Adds one verdict; false when it was dropped (a new flow over a cap). Times are clamped into the window. */
    public synchronized boolean record(Observation o, long nowMillis) {
        return record(o, 1, nowMillis);
    }

    /** Adds {@code count} verdicts of one key (an agent counted them into one event). */
    public synchronized boolean record(Observation o, long count, long nowMillis) {
        expire(nowMillis);
        long t = Math.max(Math.min(o.timeMillis(), nowMillis), oldestKept(nowMillis));
        return add(o, t, Math.max(1, count), t, t, nowMillis) != null;
    }

    /** The entry counted into, or null when the record was dropped. */
    private Entry add(Observation o, long bucketTime, long count, long first, long last, long nowMillis) {
        long bucket = bucketOf(bucketTime);
        Map<FlowKey, Entry> held = buckets.get(bucket);
        Entry e = held == null ? null : held.get(o.key());
        if (e == null) {
            long size = ENTRY_BYTES + o.key().approximateBytes();
            if (!makeRoom(size, bucket)) {
                dropped += count;
                return null;
            }
            e = new Entry(size);
            e.first = first;
            e.last = last;
            buckets.computeIfAbsent(bucket, b -> new HashMap<>()).put(o.key(), e);
            records++;
            bytes += size;
        }
        e.count += count;
        if (bucket < handedOutBefore) {
            changedAfterHandedOut.add(bucket);
        }
        e.first = Math.min(e.first, first);
        if (last >= e.last) {
            e.last = last;
            e.sourcePod = o.sourcePod();
            e.sourceIp = o.sourceIp();
            e.destinationPod = o.destinationPod();
            e.destinationIp = o.destinationIp();
        }
        return e;
    }

    /** Evicts oldest buckets (never {@code keep}, nor newer ones) until a record of {@code size} fits. */
    private boolean makeRoom(long size, long keep) {
        while (records + 1 > limits.maxRecords() || bytes + size > limits.maxBytes()) {
            Map.Entry<Long, Map<FlowKey, Entry>> oldest = buckets.firstEntry();
            if (oldest == null || oldest.getKey() >= keep) {
                return false;
            }
            removeBucket(oldest.getKey());
            evicted += oldest.getValue().size();
        }
        return true;
    }

    private void removeBucket(long start) {
        Map<FlowKey, Entry> gone = buckets.remove(start);
        records -= gone.size();
        for (Entry e : gone.values()) {
            bytes -= e.bytes;
        }
    }

    /** The earliest time still in the window: buckets ending at or before it are gone. */
    private long oldestKept(long nowMillis) {
        return nowMillis - limits.window().toMillis();
    }

    /** Removes the buckets that ended before the window. */
    public synchronized void expire(long nowMillis) {
        long limit = oldestKept(nowMillis);
        Iterator<Map.Entry<Long, Map<FlowKey, Entry>>> it = buckets.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Map<FlowKey, Entry>> b = it.next();
            if (b.getKey() + width > limit) {
                break;
            }
            it.remove();
            records -= b.getValue().size();
            expired += b.getValue().size();
            b.getValue().values().forEach(e -> bytes -= e.bytes);
        }
    }

    /** Every record held, per bucket (oldest first), e.g. to write them out. */
    public synchronized List<Held> held() {
        List<Held> out = new ArrayList<>(records);
        buckets.forEach((start, entries) -> entries.forEach((k, e) -> out.add(held(k, start, e))));
        return out;
    }

    /**
     * The records whose key matches and that were seen at or after {@code sinceMillis}, merged over
     * buckets (counts added, earliest first seen, the newest last seen with its pods), most seen first.
     */
    public synchronized List<Held> merged(Predicate<FlowKey> filter, long sinceMillis) {
        Map<FlowKey, Held> byKey = new HashMap<>();
        buckets.tailMap(bucketOf(sinceMillis), true)
                .forEach((start, entries) -> entries.forEach((k, e) -> {
                    if (e.last < sinceMillis || !filter.test(k)) {
                        return;
                    }
                    Held h = held(k, start, e);
                    byKey.merge(k, h, FlowHistory::merge);
                }));
        List<Held> out = new ArrayList<>(byKey.values());
        out.sort((a, b) ->
                a.count() != b.count() ? Long.compare(b.count(), a.count()) : Long.compare(b.lastSeen(), a.lastSeen()));
        return out;
    }

    private static Held merge(Held a, Held b) {
        Held newer = b.lastSeen() >= a.lastSeen() ? b : a;
        return new Held(
                a.key(),
                Math.min(a.bucketStart(), b.bucketStart()),
                a.count() + b.count(),
                Math.min(a.firstSeen(), b.firstSeen()),
                newer.lastSeen(),
                newer.sourcePod(),
                newer.sourceIp(),
                newer.destinationPod(),
                newer.destinationIp());
    }

    private static Held held(FlowKey k, long start, Entry e) {
        return new Held(k, start, e.count, e.first, e.last, e.sourcePod, e.sourceIp, e.destinationPod, e.destinationIp);
    }

    /** Puts back a record written earlier (from a file); those outside the window or over a cap are left out. */
    public synchronized boolean restore(Held h, long nowMillis) {
        expire(nowMillis);
        if (h.bucketStart() + width <= oldestKept(nowMillis) || h.count() < 1) {
            return false;
        }
        Observation o = new Observation(
                h.key(), h.lastSeen(), h.sourcePod(), h.sourceIp(), h.destinationPod(), h.destinationIp());
        long bucketTime = Math.min(h.bucketStart(), nowMillis);
        Entry e = add(o, bucketTime, h.count(), h.firstSeen(), h.lastSeen(), nowMillis);
        if (e != null) {
            e.exported += h.count(); // written before the restart: already handed out then (at close)
        }
        return e != null;
    }

    /**
     * The records of the buckets that ended at or before {@code endedBy} with counts not handed out
     * yet, each with the count added since it was last handed out (a late verdict in a bucket handed
     * out earlier comes again with its own count), marked as handed out. Oldest bucket first.
     */
    public synchronized List<Held> unexported(long endedBy) {
        List<Held> out = new ArrayList<>();
        // Only what changed since the last call is scanned: it runs every second under the lock.
        for (long start : changedAfterHandedOut) {
            handOut(start, buckets.getOrDefault(start, Map.of()), out); // gone meanwhile: evicted or expired
        }
        changedAfterHandedOut.clear();
        for (Map.Entry<Long, Map<FlowKey, Entry>> b :
                buckets.tailMap(handedOutBefore, true).entrySet()) {
            if (b.getKey() + width > endedBy) {
                break;
            }
            handOut(b.getKey(), b.getValue(), out);
            handedOutBefore = b.getKey() + width;
        }
        return out;
    }

    private void handOut(long start, Map<FlowKey, Entry> entries, List<Held> out) {
        entries.forEach((k, e) -> {
            if (e.count > e.exported) {
                out.add(new Held(
                        k,
                        start,
                        e.count - e.exported,
                        e.first,
                        e.last,
                        e.sourcePod,
                        e.sourceIp,
                        e.destinationPod,
                        e.destinationIp));
                e.exported = e.count;
            }
        });
    }

    /** The oldest bucket's start, or -1 when empty. */
    public synchronized long oldest() {
        return buckets.isEmpty() ? -1 : buckets.firstKey();
    }

    public synchronized int records() {
        return records;
    }

    public synchronized long approximateBytes() {
        return bytes;
    }

    /** Verdicts not recorded: new flows over a cap. */
    public synchronized long dropped() {
        return dropped;
    }

    /** Records removed to make room (caps). */
    public synchronized long evicted() {
        return evicted;
    }

    /** Records removed because their bucket left the window. */
    public synchronized long expired() {
        return expired;
    }
}
