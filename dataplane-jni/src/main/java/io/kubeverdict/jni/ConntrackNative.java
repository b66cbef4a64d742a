// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.nio.ByteBuffer;

/** Natives of kv_conntrack.c; handles point to the shim's conntrack struct. */
final class ConntrackNative {
    private ConntrackNative() {}

    static native long open();

    static native int close(long handle);

    /** Starts a dump (reading any earlier one to its end first); 0 or -errno. */
    static native int dumpStart(long handle, int family, int mark, int markMask, int match, byte[] address);

    /**
     * Stores the dump's next entries at indexes {@code from} to {@code capacity - 1} of {@code out}
     * and returns how many; 0 once the dump is over (all of it returned), or then -errno.
     */
    static native int dumpNext(long handle, ByteBuffer out, int from, int capacity);

    static native int setMark(long handle, ByteBuffer entries, int index, int mark, int mask);

    static native int delete(long handle, ByteBuffer entries, int index);
}
