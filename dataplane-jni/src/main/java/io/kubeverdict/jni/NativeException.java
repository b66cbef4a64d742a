// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

/** A native call failed; carries the errno the shim returned (as -errno). */
public class NativeException extends RuntimeException {
    private final int errno;

    public NativeException(String operation, int errno, String detail) {
        super(operation + " failed: " + Errno.name(errno)
                + (detail == null || detail.isBlank() ? "" : ": " + detail.strip()));
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }

    /** Returns rc when it is not negative, otherwise throws what the operation's failure means. */
    static long check(String operation, long rc) {
        if (rc < 0) {
            int errno = (int) -rc;
            if (errno == Errno.EPERM || errno == Errno.EACCES) {
                throw new NativePermissionException(operation, errno);
            }
            throw new NativeException(operation, errno, null);
        }
        return rc;
    }
}
