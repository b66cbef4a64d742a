// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.PacketBatch;
import io.kubeverdict.runtime.FatalThreads;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread that answers the DNS queue: receive a batch, let the {@link DnsLearner} learn from
 * each response into the current generation's view, then accept every packet (one verdict
 * message for the batch). The learning happens before the verdict, so when the pod reads the
 * answer its addresses are already allowed. Once a second, expired addresses are swept.
 */
public final class DnsLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DnsLoop.class);
    static final int RECEIVE_TIMEOUT_MILLIS = 100;
    private static final long SWEEP_NANOS = 1_000_000_000L;

    private final PacketBatch batch;
    private final Supplier<LearnedAddressBook.View> views;
    private final DnsLearner learner;
    private final LearnedAddressBook book;
    private final LongConsumer holdNanos;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long failures;

    /**
     * @param queue the bound DNS queue (copying whole responses); this loop takes its batch
     * @param views the current generation's learned addresses (null before the first state)
     * @param holdNanos told, per packet, how long it was held: from the batch's arrival to its verdict
     */
    public DnsLoop(
            NfQueue queue,
            int batchSize,
            Supplier<LearnedAddressBook.View> views,
            DnsLearner learner,
            LearnedAddressBook book,
            LongConsumer holdNanos) {
        this.batch = queue.batch(batchSize);
        this.views = Objects.requireNonNull(views);
        this.learner = Objects.requireNonNull(learner);
        this.book = Objects.requireNonNull(book);
        this.holdNanos = Objects.requireNonNull(holdNanos);
        this.thread = FatalThreads.worker("dns-loop-q" + queue.number(), this::run);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    /** Failed receive/verdict calls (the loop goes on). */
    public long failures() {
        return failures;
    }

    private void run() {
        long nextSweep = System.nanoTime() + SWEEP_NANOS;
        while (running) {
            try {
                int n = batch.receive(RECEIVE_TIMEOUT_MILLIS);
                if (n > 0) {
                    long arrived = System.nanoTime();
                    answer(n);
                    batch.sendVerdicts();
                    long held = System.nanoTime() - arrived;
                    for (int i = 0; i < n; i++) {
                        holdNanos.accept(held);
                    }
                }
                long now = System.nanoTime();
                if (now - nextSweep >= 0) {
                    book.sweep();
                    nextSweep = now + SWEEP_NANOS;
                }
            } catch (RuntimeException e) {
                failures++;
                log.warn("DNS queue: {}", e.toString());
                pause();
            }
        }
    }

    private void answer(int n) {
        LearnedAddressBook.View view = views.get();
        ByteBuffer buffer = batch.buffer();
        for (int i = 0; i < n; i++) {
            try {
                learner.handle(view, buffer, batch.dataOffset(i), batch.copiedLength(i));
            } catch (RuntimeException e) {
                failures++; // never keep an answer from the pod
                log.warn("DNS learning failed on a packet; it is accepted unchanged", e);
            }
            batch.accept(i);
        }
    }

    private void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(10L * RECEIVE_TIMEOUT_MILLIS + 5_000);
    }
}
