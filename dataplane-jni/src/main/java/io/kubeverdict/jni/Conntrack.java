// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * The conntrack table of the network namespace of the thread that opens this (ctnetlink). Dumps
 * are filtered by the kernel ({@link ConntrackQuery}); entries are changed by their original
 * tuple. An entry that vanished between a dump and a change is reported as such, not as an
 * error. Calls are serialised; use from one thread at a time.
 */
public final class Conntrack implements AutoCloseable {
    /** Takes one chunk of a dump; the entries are valid during the call only. */
    @FunctionalInterface
    public interface Chunks {
        void accept(ConntrackEntries chunk);
    }

    private long handle;

    public Conntrack() {
        NativeLibrary.ensureAvailable();
        handle = NativeException.check("open ctnetlink", ConntrackNative.open());
    }

    /**
     * Streams what the query selects through {@code chunk}, at most its capacity at a time, to
     * {@code chunks} while the dump runs (so memory does not grow with the table); returns how
     * many entries there were. Entries may be changed ({@link #setMark}) from {@code chunks}. Throws
     * {@link NativeException} for what the kernel refuses or, after the last chunk, when the dump
     * was lost in part (ENOBUFS, or EINTR when the kernel says it was interrupted): the caller may
     * dump again, and sees again the entries it was already given.
     */
    public synchronized int dump(ConntrackQuery query, ConntrackEntries chunk, Chunks chunks) {
        start(query);
        int total = 0;
        try {
            for (int n; (n = next(query, chunk, 0)) > 0; ) {
                chunk.size(n);
                total += n;
                chunks.accept(chunk); // if it throws, the next dump reads this one to its end first
            }
            return total;
        } finally {
            chunk.size(0);
        }
    }

    /**
     * Dumps what the query selects into {@code into} (replacing its content, growing it) and
     * returns the number of entries: for small dumps (tools, tests); the agent streams them.
     */
    public synchronized int dump(ConntrackQuery query, ConntrackEntries into) {
        start(query);
        into.size(0);
        for (; ; ) {
            if (into.size() == into.capacity()) {
                into.grow();
            }
            int n = next(query, into, into.size());
            if (n == 0) {
                return into.size();
            }
            into.size(into.size() + n);
        }
    }

    private void start(ConntrackQuery query) {
        int rc = ConntrackNative.dumpStart(
                handle(),
                query.family(),
                query.markValue(),
                query.markMask(),
                query.match().ordinal(),
                query.addressBytes());
        if (rc < 0) { // the message is built only for a failure: dumps run on every policy change
            NativeException.check("conntrack dump " + query, rc);
        }
    }

    /** The next entries into {@code into} from index {@code from}; 0 when the dump is over. */
    private int next(ConntrackQuery query, ConntrackEntries into, int from) {
        int n = ConntrackNative.dumpNext(handle(), into.buffer(), from, into.capacity());
        if (n < 0) {
            into.size(0);
            NativeException.check("conntrack dump " + query, n);
        }
        return n;
    }

    /**
     * Sets the bits of {@code mask} in entry {@code i}'s mark to those of {@code value}. Returns
     * false when the entry no longer exists.
     */
    public synchronized boolean setMark(ConntrackEntries entries, int i, int value, int mask) {
        entries.family(i); // bounds check before the shim reads the buffer
        int rc = ConntrackNative.setMark(handle(), entries.buffer(), i, value, mask);
        if (rc == -Errno.ENOENT) {
            return false;
        }
        if (rc < 0) {
            NativeException.check("conntrack mark " + entries.describe(i), rc);
        }
        return true;
    }

    /**
     * Deletes entry {@code i} if it still has the id it was dumped with. Returns false when it is
     * gone. The kernel's id hashes the entry's memory address and tuple, so an entry of the same
     * tuple made again at once may reuse the memory and the id: the check stops a stale delete
     * of a later connection only most of the time.
     */
    public synchronized boolean delete(ConntrackEntries entries, int i) {
        entries.family(i);
        int rc = ConntrackNative.delete(handle(), entries.buffer(), i);
        if (rc == -Errno.ENOENT) {
            return false;
        }
        if (rc < 0) {
            NativeException.check("conntrack delete " + entries.describe(i), rc);
        }
        return true;
    }

    private long handle() {
        if (handle == 0) {
            throw new IllegalStateException("conntrack socket closed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != 0) {
            long h = handle;
            handle = 0;
            ConntrackNative.close(h);
        }
    }
}
