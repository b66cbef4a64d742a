// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.util.concurrent.Callable;

/**
 * Network namespaces: setns(2) for threads we own. setns moves only the calling thread, so work
 * for another namespace runs on a {@link NetnsThread}; the caller's thread never moves.
 */
public final class Netns {
    private Netns() {}

    /** The path of a namespace made by {@code ip netns add NAME}. */
    public static String named(String name) {
        return "/run/netns/" + name;
    }

    /** Moves the current thread into the namespace at path; use only on threads you own. */
    public static void enterCurrentThread(String path) {
        NativeLibrary.ensureAvailable();
        NativeException.check("setns " + path, NetnsNative.enter(path));
    }

    /** Runs work on a fresh thread inside the namespace at path; the caller's thread never moves. */
    public static <T> T call(String path, Callable<T> work) throws Exception {
        try (NetnsThread thread = new NetnsThread(path)) {
            return thread.call(work);
        }
    }
}
