// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The streams that have something to send, run by at most {@code parallelism} tasks of the
 * sender executor at a time, each taking streams from one queue until it is empty. A change that
 * reaches a thousand streams is a thousand cheap queue insertions on the event thread and a
 * couple of executor hand-offs (and thread wake-ups), instead of a thousand of each.
 */
final class SendQueue {
    private final Executor executor;
    private final int parallelism;
    private final ConcurrentLinkedQueue<Runnable> ready = new ConcurrentLinkedQueue<>();
    private final AtomicInteger running = new AtomicInteger();

    SendQueue(Executor executor, int parallelism) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be at least 1: " + parallelism);
        }
        this.executor = executor;
        this.parallelism = parallelism;
    }

    /** Runs {@code drain} on a sender thread soon; it must not throw. */
    void submit(Runnable drain) {
        ready.add(drain);
        startRunner();
    }

    private void startRunner() {
        for (int n = running.get(); n < parallelism; n = running.get()) {
            if (running.compareAndSet(n, n + 1)) {
                try {
                    executor.execute(this::runAll);
                } catch (RuntimeException e) {
                    running.decrementAndGet(); // executor shut down: nothing will run
                    throw e;
                }
                return;
            }
        }
    }

    private void runAll() {
        try {
            for (Runnable r; (r = ready.poll()) != null; ) {
                r.run();
            }
        } finally {
            running.decrementAndGet();
            // A submit that saw every runner busy after our last poll left its task to us.
            if (!ready.isEmpty()) {
                startRunner();
            }
        }
    }

    /** Runner tasks currently started (for tests). */
    int running() {
        return running.get();
    }
}
