// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A thread that lives inside one network namespace. setns(2) moves only the calling thread, and
 * sockets it creates (TCP/UDP, netlink for nftables and NFQUEUE) belong to that namespace for
 * their whole life, so the rest of the JVM can drive them from any thread.
 */
public final class NetnsThread implements AutoCloseable {
    private final ExecutorService thread;

    /** A thread in the namespace at path (/run/netns/NAME or /proc/PID/ns/net). */
    public NetnsThread(String path) throws Exception {
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netns-" + path.substring(path.lastIndexOf('/') + 1));
            t.setDaemon(true);
            return t;
        });
        try {
            call(() -> {
                Netns.enterCurrentThread(path);
                return null;
            });
        } catch (Exception e) {
            thread.shutdownNow();
            throw e;
        }
    }

    /** A thread in the namespace made by {@code ip netns add name}. */
    public static NetnsThread named(String name) throws Exception {
        return new NetnsThread(Netns.named(name));
    }

    /** Runs work on the namespace's thread and returns its result (its exception, unwrapped). */
    public <T> T call(Callable<T> work) throws Exception {
        try {
            return thread.submit(work).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
