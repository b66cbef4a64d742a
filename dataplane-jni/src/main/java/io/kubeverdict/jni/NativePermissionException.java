// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** The kernel refused: the process lacks CAP_NET_ADMIN (or runs unprivileged). */
public final class NativePermissionException extends NativeException {
    public NativePermissionException(String operation, int errno) {
        super(operation, errno, "needs CAP_NET_ADMIN (run as root or grant the capability)");
    }
}
