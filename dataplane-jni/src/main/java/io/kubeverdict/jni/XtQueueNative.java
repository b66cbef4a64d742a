// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** Natives of kv_xtqueue.c. */
final class XtQueueNative {
    private XtQueueNative() {}

    static native int install(int family, String table, String chain, int queueNum, int queues, int bypass);
}
