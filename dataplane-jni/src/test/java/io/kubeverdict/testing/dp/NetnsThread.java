package io.kubeverdict.testing.dp;

import io.kubeverdict.jni.Netns;
import io.kubeverdict.testing.TestNamespace;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** One thread that lives in a namespace, for objects (an nft context) used across several calls. */
public final class NetnsThread implements AutoCloseable {
    private final ExecutorService thread;

    public NetnsThread(TestNamespace ns) throws Exception {
        thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "in-" + ns.name());
            t.setDaemon(true);
            return t;
        });
        call(() -> {
            Netns.enterCurrentThread(ns.path());
            return null;
        });
    }

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
