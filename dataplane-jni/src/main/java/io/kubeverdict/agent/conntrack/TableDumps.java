// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.Errno;
import io.kubeverdict.jni.NativeException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The re-judging thread's conntrack table: opened when first needed and again after a failure that
 * may have broken its socket; dumps streamed through one buffer of {@value #CHUNK_ENTRIES} entries
 * (the agent never holds more, whatever the table's size), a lost dump retried at once.
 */
final class TableDumps implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TableDumps.class);
    static final int DUMP_ATTEMPTS = 3;
    /** Entries a dump delivers to the agent at a time. */
    static final int CHUNK_ENTRIES = 1024;

    private final Supplier<ConntrackTable> opener;
    private final RejudgeObserver observer;
    private final ConntrackEntries entries = new ConntrackEntries(CHUNK_ENTRIES);
    private ConntrackTable table;

    TableDumps(Supplier<ConntrackTable> opener, RejudgeObserver observer) {
        this.opener = opener;
        this.observer = observer;
    }

    /** Opens the table if it is not open (throws what the opener throws). */
    void open() {
        if (table == null) {
            table = opener.get();
        }
    }

    /**
     * Streams a dump through one buffer to {@code chunks} (never more than a chunk of entries
     * at once, whatever the table's size); dumps again when part of it was lost (what was judged
     * is judged again). False (counted) when it could not be done.
     */
    boolean dump(ConntrackQuery q, Conntrack.Chunks chunks) {
        for (int attempt = 1; ; attempt++) {
            try {
                observer.dumped(table.dump(q, entries, chunks));
                return true;
            } catch (NativeException e) {
                observer.dumpFailed(e.errno());
                boolean transient_ = e.errno() == Errno.ENOBUFS || e.errno() == Errno.EINTR;
                if (!transient_ || attempt == DUMP_ATTEMPTS) {
                    log.warn("conntrack dump {} failed (attempt {}): {}", q, attempt, e.getMessage());
                    if (!transient_) {
                        reopen();
                    }
                    return false;
                }
            }
        }
    }

    /** See {@link ConntrackTable#setMark}. */
    boolean setMark(ConntrackEntries dumped, int i, int value, int mask) {
        return table.setMark(dumped, i, value, mask);
    }

    /** Closes the table and opens it again (a failure may have broken its socket). */
    void reopen() {
        if (table != null) {
            try {
                table.close();
            } catch (RuntimeException ignored) {
                // it was broken anyway
            }
            table = null;
        }
        try {
            table = opener.get();
        } catch (RuntimeException e) {
            log.warn("cannot reopen conntrack: {}", e.toString());
        }
    }

    @Override
    public void close() {
        if (table != null) {
            table.close();
            table = null;
        }
    }
}
