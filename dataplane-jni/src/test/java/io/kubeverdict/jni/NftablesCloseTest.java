// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Closing a context while another thread is inside {@link Nftables#run} (the agent's sync thread
 * in a long transaction when SIGTERM closes the agent, security audit L5) must not free it under
 * that thread: libnftables is not thread-safe and a freed context is a use-after-free. A stand-in
 * library holds the run inside until the test lets it go, and records every call on a freed
 * context and every free under a call.
 */
class NftablesCloseTest {
    private final BlockingLibrary library = new BlockingLibrary();
    private final Nftables nft = new Nftables(library);

    @Test
    void closeWaitsForARunUnderWayBeforeFreeingTheContext() throws Exception {
        Thread runner = start("runner", () -> nft.run("add table inet t"));
        assertThat(library.entered.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = start("closer", nft::close);
        awaitWaitingOrDone(closer);
        library.release.countDown();
        runner.join(10_000);
        closer.join(10_000);

        assertThat(library.violations).isEmpty();
        assertThat(library.frees).hasValue(1);
    }

    @Test
    void aRunThatOutlastsTheClosersWaitFreesTheContextAsItEnds() throws Exception {
        Thread runner = start("runner", () -> nft.run("add table inet t"));
        assertThat(library.entered.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = start("closer", nft::close);
        awaitWaitingOrDone(closer);
        closer.interrupt(); // ends the wait as its bound would: SIGTERM's close does not wait forever
        closer.join(10_000);
        assertThat(closer.isAlive()).as("close returned").isFalse();
        assertThat(library.violations).as("nothing freed under the run").isEmpty();
        assertThat(library.frees).as("left to the run").hasValue(0);

        library.release.countDown();
        runner.join(10_000);
        assertThat(library.violations).isEmpty();
        assertThat(library.frees).as("freed by the run as it ended").hasValue(1);
    }

    @Test
    void aRunAfterCloseIsRefusedWithoutTouchingTheLibrary() {
        nft.close();
        assertThatThrownBy(() -> nft.run("list tables")).isInstanceOf(IllegalStateException.class);
        nft.close();
        assertThat(library.violations).isEmpty();
        assertThat(library.frees).hasValue(1);
    }

    private static Thread start(String name, Runnable work) {
        Thread thread = new Thread(work, "nftables-close-test-" + name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** Until the thread waits (in close, for the run) or has finished (close did not wait). */
    private static void awaitWaitingOrDone(Thread thread) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            Thread.State state = thread.getState();
            if (state == Thread.State.TERMINATED
                    || state == Thread.State.TIMED_WAITING
                    || state == Thread.State.WAITING) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError(thread.getName() + " neither waits nor ended: " + thread.getState());
    }

    /** libnftables whose run stays inside until {@link #release}; records misuse instead of crashing. */
    private static final class BlockingLibrary implements NftLibrary {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger frees = new AtomicInteger();
        final List<String> violations = new CopyOnWriteArrayList<>();

        @Override
        public long open() {
            return 1;
        }

        @Override
        public void close(long ctx) {
            if (inside.get() > 0) {
                violations.add("context freed while a call was inside it");
            }
            use("close");
            frees.incrementAndGet();
        }

        @Override
        public void setJson(long ctx, boolean json) {
            use("setJson");
        }

        @Override
        public int run(long ctx, String commands) {
            use("run");
            inside.incrementAndGet();
            try {
                entered.countDown();
                if (!release.await(30, TimeUnit.SECONDS)) {
                    violations.add("the test never let the run go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                inside.decrementAndGet();
            }
            use("run's end");
            return 0;
        }

        @Override
        public String output(long ctx) {
            use("output");
            return "";
        }

        @Override
        public String error(long ctx) {
            use("error");
            return "";
        }

        private void use(String call) {
            if (frees.get() > 0) {
                violations.add(call + " on a freed context");
            }
        }
    }
}
