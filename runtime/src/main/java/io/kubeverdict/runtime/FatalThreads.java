// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Worker threads that must not die quietly. A worker loop (verdict, DNS, re-judging, sync,
 * calculation, discovery...) handles the failures it expects and goes on; anything that still
 * escapes it ({@code Error}s such as {@code StackOverflowError} or {@code AssertionError}, or a
 * bug's {@code RuntimeException}) leaves the process without a job it cannot run without. Then the
 * process reports it once (the thread's name and the cause), fails every health probe
 * ({@link #healthy()}, read by {@code MetricsEndpoint}) and exits with {@link #EXIT_CODE}, so that
 * Kubernetes restarts it — rather than a node queueing packets that nobody answers, or a
 * calculation nobody publishes, behind a probe that says ok.
 *
 * <p>Process-wide on purpose (one process, one fate); tests replace the exit with
 * {@link #observeForTest()}.
 */
public final class FatalThreads {
    private static final Logger log = LoggerFactory.getLogger(FatalThreads.class);
    /** EX_SOFTWARE: an internal error. */
    public static final int EXIT_CODE = 70;
    /** How long shutdown hooks get before the process is halted anyway. */
    private static final long HALT_AFTER_MILLIS = 20_000;

    private static final AtomicReference<String> death = new AtomicReference<>();
    private static volatile IntConsumer exit = FatalThreads::exitProcess;

    private FatalThreads() {}

    /** {@code body} as a worker loop: any Throwable escaping it is fatal ({@link #died}). */
    public static Runnable guard(Runnable body) {
        return () -> {
            try {
                body.run();
            } catch (Throwable t) {
                died(Thread.currentThread().getName(), t);
            }
        };
    }

    /** A thread named {@code name} running {@code body} as a guarded worker loop (not started). */
    public static Thread worker(String name, Runnable body) {
        Thread t = new Thread(guard(body), name);
        t.setDaemon(true);
        return t;
    }

    /** The worker {@code thread} died of {@code cause}: report, fail health, exit (the first death only). */
    public static void died(String thread, Throwable cause) {
        if (death.compareAndSet(null, "thread " + thread + " died: " + cause)) {
            log.error("thread {} died unexpectedly; the process exits ({}) to be restarted", thread, EXIT_CODE, cause);
            exit.accept(EXIT_CODE);
        } else {
            log.error("thread {} died unexpectedly too", thread, cause);
        }
    }

    /** False once a worker thread died. */
    public static boolean healthy() {
        return death.get() == null;
    }

    /** Which thread died and of what, or null. */
    public static String death() {
        return death.get();
    }

    /** Exits off the dying thread (shutdown hooks may join it), halting if the hooks hang. */
    private static void exitProcess(int code) {
        Thread exiting = new Thread(() -> System.exit(code), "fatal-exit");
        exiting.setDaemon(true);
        exiting.start();
        Thread halting = new Thread(
                () -> {
                    try {
                        TimeUnit.MILLISECONDS.sleep(HALT_AFTER_MILLIS);
                    } catch (InterruptedException e) {
                        return;
                    }
                    Runtime.getRuntime().halt(code);
                },
                "fatal-halt");
        halting.setDaemon(true);
        halting.start();
    }

    /**
     * For tests: deaths are recorded instead of exiting, until {@link Observed#close()}, which
     * also clears the death (so later tests start healthy).
     */
    public static Observed observeForTest() {
        Observed o = new Observed();
        death.set(null);
        exit = o::exited;
        return o;
    }

    /** Exit codes asked for while observed. */
    public static final class Observed implements AutoCloseable {
        private final java.util.List<Integer> codes = new java.util.concurrent.CopyOnWriteArrayList<>();

        private void exited(int code) {
            codes.add(code);
        }

        public java.util.List<Integer> exitCodes() {
            return java.util.List.copyOf(codes);
        }

        @Override
        public void close() {
            exit = FatalThreads::exitProcess;
            death.set(null);
        }
    }
}
