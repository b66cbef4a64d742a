// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackEntriesFixture;
import io.kubeverdict.jni.ConntrackEntriesFixture.Entry;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.NativeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A conntrack table in memory that filters dumps as the kernel does (family, mark under mask, a
 * tuple's source), delivers them a chunk at a time, and can fail on demand, for the re-judging's unit tests.
 */
final class FakeConntrackTable implements ConntrackTable {
    final List<Entry> entries = new CopyOnWriteArrayList<>();
    final List<ConntrackQuery> queries = new CopyOnWriteArrayList<>();
    final List<String> events = new CopyOnWriteArrayList<>();
    volatile int failDumps; // the next n dumps fail with dumpErrno
    volatile int dumpErrno;
    volatile int failMarks; // the next n mark updates fail with markErrno
    volatile int markErrno;
    volatile Integer vanishOnMark; // this id disappears just before its update
    volatile int chunkEntries = 2; // entries a dump delivers at a time (as the kernel's, marked meanwhile)

    @Override
    public synchronized int dump(ConntrackQuery q, ConntrackEntries chunk, Conntrack.Chunks chunks) {
        queries.add(q);
        events.add("dump");
        if (failDumps > 0) {
            failDumps--;
            throw new NativeException("fake dump", dumpErrno, null);
        }
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries) {
            if (e.originalSource().family() != q.family() || (e.mark() & q.markMask()) != q.markValue()) {
                continue;
            }
            switch (q.match()) {
                case ORIGINAL_SOURCE -> {
                    if (!e.originalSource().equals(q.address())) {
                        continue;
                    }
                }
                case REPLY_SOURCE -> {
                    if (!e.replySource().equals(q.address())) {
                        continue;
                    }
                }
                default -> {}
            }
            out.add(e);
        }
        int size = Math.min(chunkEntries, chunk.capacity());
        for (int from = 0; from < out.size(); from += size) {
            ConntrackEntriesFixture.clear(chunk);
            for (Entry e : out.subList(from, Math.min(out.size(), from + size))) {
                ConntrackEntriesFixture.add(chunk, e);
            }
            chunks.accept(chunk);
        }
        ConntrackEntriesFixture.clear(chunk);
        return out.size();
    }

    @Override
    public synchronized boolean setMark(ConntrackEntries dumped, int i, int value, int mask) {
        int id = dumped.id(i);
        events.add("mark " + id);
        if (failMarks > 0) {
            failMarks--;
            throw new NativeException("fake mark", markErrno, null);
        }
        if (vanishOnMark != null && vanishOnMark == id) {
            entries.removeIf(e -> e.id() == id);
        }
        // as the kernel: the entry named by its original tuple (ids are hashes and may repeat)
        for (int k = 0; k < entries.size(); k++) {
            Entry e = entries.get(k);
            if (e.protocol() == dumped.protocol(i)
                    && e.originalSource().equals(dumped.originalSource(i))
                    && e.sourcePort() == dumped.originalSourcePort(i)
                    && e.originalDestination().equals(dumped.originalDestination(i))
                    && e.destinationPort() == dumped.originalDestinationPort(i)) {
                entries.set(k, e.withMark((e.mark() & ~mask) | value));
                return true;
            }
        }
        return false;
    }

    synchronized int markOf(int id) {
        for (Entry e : entries) {
            if (e.id() == id) {
                return e.mark();
            }
        }
        return -1;
    }

    /** The mark of the connection opened from this source port. */
    synchronized int markOfSourcePort(int port) {
        for (Entry e : entries) {
            if (e.sourcePort() == port) {
                return e.mark();
            }
        }
        return -1;
    }

    @Override
    public void close() {}
}
