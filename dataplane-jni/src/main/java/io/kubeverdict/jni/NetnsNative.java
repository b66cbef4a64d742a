// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** Natives of kv_netns.c. */
final class NetnsNative {
    private NetnsNative() {}

    static native int enter(String path);
}
