// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;

/** The node's conntrack table as the re-judging needs it (the shim's {@link Conntrack} in the agent). */
public interface ConntrackTable extends AutoCloseable {
    /** See {@link Conntrack#dump(ConntrackQuery, ConntrackEntries, Conntrack.Chunks)}: streamed through {@code chunk}. */
    int dump(ConntrackQuery query, ConntrackEntries chunk, Conntrack.Chunks chunks);

    /** See {@link Conntrack#setMark}: false when the entry is gone. */
    boolean setMark(ConntrackEntries entries, int i, int value, int mask);

    @Override
    void close();

    /** The table of the calling thread's network namespace. */
    static ConntrackTable open() {
        Conntrack ct = new Conntrack();
        return new ConntrackTable() {
            @Override
            public int dump(ConntrackQuery query, ConntrackEntries chunk, Conntrack.Chunks chunks) {
                return ct.dump(query, chunk, chunks);
            }

            @Override
            public boolean setMark(ConntrackEntries entries, int i, int value, int mask) {
                return ct.setMark(entries, i, value, mask);
            }

            @Override
            public void close() {
                ct.close();
            }
        };
    }
}
