// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.util.Map;

/** Names of the Linux errno values the shim can return, for messages a human can read. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EPROTO = 71;
    public static final int EMSGSIZE = 90;
    public static final int EPROTONOSUPPORT = 93;
    public static final int EOPNOTSUPP = 95;
    public static final int EAFNOSUPPORT = 97;
    public static final int ENOBUFS = 105;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EPERM, "EPERM"),
            Map.entry(ENOENT, "ENOENT"),
            Map.entry(EINTR, "EINTR"),
            Map.entry(EBADF, "EBADF"),
            Map.entry(EAGAIN, "EAGAIN"),
            Map.entry(ENOMEM, "ENOMEM"),
            Map.entry(EACCES, "EACCES"),
            Map.entry(EBUSY, "EBUSY"),
            Map.entry(EEXIST, "EEXIST"),
            Map.entry(EINVAL, "EINVAL"),
            Map.entry(ENOSPC, "ENOSPC"),
            Map.entry(EMSGSIZE, "EMSGSIZE"),
            Map.entry(EPROTO, "EPROTO"),
            Map.entry(EOPNOTSUPP, "EOPNOTSUPP"),
            Map.entry(EPROTONOSUPPORT, "EPROTONOSUPPORT"),
            Map.entry(EAFNOSUPPORT, "EAFNOSUPPORT"),
            Map.entry(ENOBUFS, "ENOBUFS"));

    private Errno() {}

    public static String name(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }
}
