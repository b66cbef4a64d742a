// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Undoes what the sandbox made, in reverse order of making, exactly once: from close(), or from a
 * shutdown hook when the JVM is stopped (Ctrl-C). A step that fails is noted and the others still run.
 */
final class Teardown implements AutoCloseable {
    interface Step {
        void run() throws Exception;
    }

    private record Named(String what, Step step) {}

    private final Progress progress;
    private final Deque<Named> steps = new ArrayDeque<>();
    private final Thread hook = new Thread(this::fromHook, "sandbox-teardown");
    private boolean closed;

    Teardown(Progress progress) {
        this.progress = progress;
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Registers how to undo what was just made (or is about to be: a step must cope with a half-made thing). */
    synchronized void add(String what, Step step) {
        if (closed) {
            throw new IllegalStateException("torn down");
        }
        steps.push(new Named(what, step));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // we are the hook, or the JVM is exiting anyway
        }
        while (!steps.isEmpty()) {
            Named n = steps.pop();
            try {
                n.step().run();
            } catch (Exception | Error e) {
                progress.note("cleanup of " + n.what() + ": " + e);
            }
        }
    }

    private void fromHook() {
        progress.note("tearing down");
        close();
    }
}
