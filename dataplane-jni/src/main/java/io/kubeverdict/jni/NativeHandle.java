// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A native handle that is never freed while a thread is inside a call on it (security audit L5).
 * Every call holds a use ({@link #acquire}, then {@link #release} in a finally); {@link #close}
 * refuses new uses, waits a bounded time for those under way and frees the handle once none is
 * left. A use that outlasts the wait frees it when it ends, on its own thread: close never
 * blocks past its bound and never frees under a user. The handle is freed exactly once.
 *
 * <p>Two atomic operations per call and nothing allocated, so the verdict loops' hot path may use it.
 */
final class NativeHandle {
    /** What the free function gets back from {@link #close} when a use outlasted the wait: it frees later. */
    static final int LEFT_TO_LAST_USE = Integer.MIN_VALUE;
    /** How long {@link #close} waits for uses under way, by default. */
    static final long CLOSE_WAIT_MILLIS = 2_000;

    /** Frees the native object; returns 0 or -errno. */
    @FunctionalInterface
    interface Free {
        int free(long handle);
    }

    private static final long CLOSED = 1L << 62; // no new uses
    private static final long HANDED_OVER = 1L << 61; // the last use frees
    private static final long FREED = 1L << 60;
    private static final long USES = FREED - 1;

    private final String what;
    private final long handle;
    private final Free free;
    private final AtomicLong state = new AtomicLong(); // flags | uses under way

    NativeHandle(String what, long handle, Free free) {
        this.what = what;
        this.handle = handle;
        this.free = free;
    }

    /** The handle, held until {@link #release}; throws IllegalStateException once closed. */
    long acquire() {
        for (; ; ) {
            long s = state.get();
            if ((s & CLOSED) != 0) {
                throw new IllegalStateException(what + " is closed");
            }
            if (state.compareAndSet(s, s + 1)) {
                return handle;
            }
        }
    }

    /** Ends a use; the last one after a close that stopped waiting frees the handle. */
    void release() {
        long s = state.decrementAndGet();
        if ((s & HANDED_OVER) != 0 && (s & USES) == 0) {
            state.set(s | FREED);
            free.free(handle); // nobody is left to report a failure to; the handle is gone either way
        }
    }

    /**
     * Refuses new uses and frees the handle once no use is under way, waiting at most waitMillis
     * (an interrupt ends the wait too). Returns the free's result, or {@link #LEFT_TO_LAST_USE}
     * when a use outlasted the wait (it frees the handle as it ends); 0 when already closed.
     */
    int close(long waitMillis) {
        long s = state.getAndUpdate(v -> v | CLOSED);
        if ((s & CLOSED) != 0) {
            return 0;
        }
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        boolean interrupted = false;
        try {
            for (; ; ) {
                s = state.get();
                if ((s & USES) == 0) { // closed: no use can start, so none is left to free it
                    state.set(s | FREED);
                    return free.free(handle);
                }
                if (interrupted || System.nanoTime() - deadline >= 0) {
                    if (state.compareAndSet(s, s | HANDED_OVER)) {
                        return LEFT_TO_LAST_USE;
                    }
                    continue; // a use ended meanwhile: look again
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether the handle was freed (tests). */
    boolean freed() {
        return (state.get() & FREED) != 0;
    }
}
