package io.kubeverdict.testbed;

import io.kubeverdict.jni.Netns;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A thread that lives inside one network namespace. Sockets it creates belong to that namespace
 * for their whole life, so the rest of the JVM can drive them from any thread: one thread per pod
 * replaces a process per server or probe.
 */
final class NetnsThread implements AutoCloseable {
    private final ExecutorService thread;

    NetnsThread(String namespace) throws Exception {
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netns-" + namespace);
            t.setDaemon(true);
            return t;
        });
        call(() -> {
            Netns.enterCurrentThread(Netns.named(namespace));
            return null;
        });
    }

    <T> T call(Callable<T> work) throws Exception {
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
