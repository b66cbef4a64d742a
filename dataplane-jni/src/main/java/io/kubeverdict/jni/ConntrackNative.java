// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.nio.ByteBuffer;

/** Natives of kv_conntrack.c; handles point to the shim's conntrack struct. */
final class ConntrackNative {
    private ConntrackNative() {}

    static native long open();

    static native int close(long handle);

    /** Returns how many entries matched (those beyond capacity are counted, not stored) or -errno. */
    static native int dump(
            long handle, int family, int mark, int markMask, int match, byte[] address, ByteBuffer out, int capacity);

    static native int setMark(long handle, ByteBuffer entries, int index, int mark, int mask);

    static native int delete(long handle, ByteBuffer entries, int index);
}
