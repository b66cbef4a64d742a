// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/**
 * The conntrack table of the network namespace of the thread that opens this (ctnetlink). Dumps
 * are filtered by the kernel ({@link ConntrackQuery}); entries are changed by their original
 * tuple. An entry that vanished between a dump and a change is reported as such, not as an
 * error. Calls are serialised; use from one thread at a time.
 */
public final class Conntrack implements AutoCloseable {
    /** How often one dump is repeated with a larger buffer when the table grows under it. */
    private static final int GROW_ATTEMPTS = 4;

    private long handle;

    public Conntrack() {
        NativeLibrary.ensureAvailable();
        handle = NativeException.check("open ctnetlink", ConntrackNative.open());
    }

    /**
     * Dumps what the query selects into {@code into} (replacing its content) and returns the
     * number of entries. Grows the buffer and dumps again when there were more entries than room.
     * Throws {@link NativeException} for what the kernel refuses or when a dump is lost (ENOBUFS,
     * or EINTR when the kernel says the dump was interrupted): the caller may dump again.
     */
    public synchronized int dump(ConntrackQuery query, ConntrackEntries into) {
        byte[] address = query.addressBytes();
        for (int attempt = 0; ; attempt++) {
            into.size(0);
            int n = ConntrackNative.dump(
                    handle(),
                    query.family(),
                    query.markValue(),
                    query.markMask(),
                    query.match().ordinal(),
                    address,
                    into.buffer(),
                    into.capacity());
            if (n < 0) { // the message is built only for a failure: dumps run on every policy change
                NativeException.check("conntrack dump " + query, n);
            }
            if (n <= into.capacity()) {
                into.size(n);
                return n;
            }
            if (attempt == GROW_ATTEMPTS) {
                throw new NativeException(
                        "conntrack dump " + query, Errno.ENOSPC, n + " entries, room for " + into.capacity());
            }
            into.ensureCapacity(n + n / 4);
        }
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
