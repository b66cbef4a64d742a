// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class SendQueueTest {

    @Test
    void everyTaskRunsOnceWithinTheParallelismAndFewHandOffs() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicInteger handOffs = new AtomicInteger();
        SendQueue q = new SendQueue(
                r -> {
                    handOffs.incrementAndGet();
                    pool.execute(r);
                },
                2);
        int tasks = 20_000;
        AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger maxConcurrent = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(tasks);
        ExecutorService producers = Executors.newFixedThreadPool(3);
        try {
            for (int p = 0; p < 3; p++) {
                int first = p;
                producers.execute(() -> {
                    for (int i = first; i < tasks; i += 3) {
                        int id = i;
                        q.submit(() -> {
                            maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
                            runs.incrementAndGet(id);
                            concurrent.decrementAndGet();
                            done.countDown();
                        });
                    }
                });
            }
            assertThat(done.await(30, TimeUnit.SECONDS))
                    .as("every task ran (no lost wake-up)")
                    .isTrue();
            for (int i = 0; i < tasks; i++) {
                assertThat(runs.get(i)).as("task %d", i).isEqualTo(1);
            }
            assertThat(maxConcurrent.get()).isLessThanOrEqualTo(2);
            assertThat(handOffs.get()).isLessThan(tasks);
            // Runners end once the queue is empty.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (q.running() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(q.running()).isZero();
        } finally {
            producers.shutdownNow();
            pool.shutdownNow();
        }
    }

    @Test
    void aTaskSubmittedWhileTheOnlyRunnerFinishesStillRuns() throws Exception {
        // One runner, producers racing its "queue empty -> stop" step, many times over.
        ExecutorService pool = Executors.newFixedThreadPool(2);
        ExecutorService producers = Executors.newFixedThreadPool(2);
        SendQueue q = new SendQueue(pool, 1);
        try {
            for (int round = 0; round < 5000; round++) {
                CountDownLatch done = new CountDownLatch(20);
                for (int p = 0; p < 2; p++) {
                    producers.execute(() -> {
                        for (int i = 0; i < 10; i++) {
                            q.submit(done::countDown);
                            Thread.onSpinWait();
                        }
                    });
                }
                assertThat(done.await(10, TimeUnit.SECONDS))
                        .as("round %d: a submitted task was left behind", round)
                        .isTrue();
            }
        } finally {
            producers.shutdownNow();
            pool.shutdownNow();
        }
    }

    @Test
    void aBurstIsRunByAsManyRunnersAsAllowed() throws Exception {
        AtomicInteger handOffs = new AtomicInteger();
        java.util.List<Runnable> parked = new java.util.ArrayList<>();
        SendQueue q = new SendQueue(
                r -> {
                    handOffs.incrementAndGet();
                    parked.add(r); // runners start only when we say
                },
                2);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 1000; i++) {
            q.submit(ran::incrementAndGet);
        }
        assertThat(handOffs.get()).isEqualTo(2);
        parked.get(0).run();
        assertThat(ran.get()).isEqualTo(1000);
        assertThat(q.running()).isEqualTo(1); // the other runner is still to start, and finds nothing
        parked.get(1).run();
        assertThat(q.running()).isZero();
    }

    @Test
    void aRejectingExecutorLeavesNoRunnerCounted() {
        SendQueue q = new SendQueue(
                r -> {
                    throw new RejectedExecutionException("shut down");
                },
                2);
        assertThatThrownBy(() -> q.submit(() -> {})).isInstanceOf(RejectedExecutionException.class);
        assertThat(q.running()).isZero();
    }
}
