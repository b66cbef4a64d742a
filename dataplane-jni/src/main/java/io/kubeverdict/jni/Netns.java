package io.kubeverdict.jni;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs work inside a network namespace. setns(2) moves only the calling thread, so the work runs
 * on a fresh thread that enters the namespace and dies with it; the caller's thread never moves.
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

    public static <T> T call(String path, Callable<T> work) throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "netns-" + path));
        try {
            Future<T> result = thread.submit(() -> {
                enterCurrentThread(path);
                return work.call();
            });
            return result.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } finally {
            thread.shutdownNow();
        }
    }
}
