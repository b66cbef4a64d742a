// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.PacketBatch;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.runtime.FatalThreads;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread of the pod address guard's hold queue: the verdict loops move here the first packets
 * whose pod address the state does not know yet (a pod whose state has not reached the node). They
 * wait here, unanswered, while the loop judges them again every {@value #RECHECK_MILLIS} ms with the
 * current state: once it knows their addresses they get its verdict; past the bound they get the
 * timeout verdict (drop, or accept when fail-open). The kernel bounds how many wait (its queue
 * length; beyond it, dropped or, fail-open, accepted), and so does {@link HeldPackets}.
 */
public final class HoldLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HoldLoop.class);
    static final int RECHECK_MILLIS = 10;
    private static final int BATCH = 64;
    /**
     * The hold queue's length in the kernel. Every held packet is judged again every
     * {@value #RECHECK_MILLIS} ms, so this bounds that work too; the guard holds only the first
     * packets of addresses the state does not know yet, which a pod's start brings a few of.
     */
    public static final int QUEUE_LENGTH = 1024;

    private final NfQueue queue;
    private final PacketBatch batch;
    private final Judge judge;
    private final HeldPackets held;
    private final HeldPackets.Answer answer;
    private final PacketTuple tuple = new PacketTuple();
    private final Thread thread;
    private volatile boolean running = true;

    /**
     * @param judge the state's judge, answering {@link Judge#HOLD} while an address is unknown
     * @param metrics what became of held packets
     */
    public HoldLoop(NfQueue queue, Judge judge, long maxHoldNanos, boolean failOpen, HoldMetrics metrics) {
        this.queue = queue;
        this.batch = queue.batch(BATCH);
        this.judge = Objects.requireNonNull(judge);
        // The kernel's length plus one batch: the kernel's bound is the one that binds.
        this.held = new HeldPackets(queue.length() + BATCH, maxHoldNanos, failOpen);
        this.answer = (id, accept, outcome, heldNanos) -> {
            try {
                queue.verdictOne(id, accept);
            } catch (RuntimeException e) {
                log.debug("hold queue {}: verdict for packet {} failed: {}", queue.number(), id, e.toString());
            }
            metrics.answered(outcome, heldNanos);
        };
        metrics.watch(held::size);
        this.thread = FatalThreads.worker("hold-loop-q" + queue.number(), this::run);
        thread.start();
    }

    private void run() {
        ByteBuffer buffer = batch.buffer();
        while (running) {
            try {
                int n = batch.receive(RECHECK_MILLIS);
                long now = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    int id = batch.packetId(i);
                    if (PacketParser.parse(
                                    buffer, batch.dataOffset(i), batch.copiedLength(i), batch.packetLength(i), tuple)
                            != PacketParser.OK) {
                        answer.answer(
                                id, false, HeldPackets.Outcome.DENIED, 0); // the verdict loop parsed it: cannot happen
                        continue;
                    }
                    if (log.isDebugEnabled()) {
                        log.debug(
                                "hold queue {}: holding packet {} until a state knows its pod address",
                                queue.number(),
                                id);
                    }
                    held.hold(id, tuple, now, answer);
                }
                held.resolve(judge, System.nanoTime(), answer);
            } catch (RuntimeException e) {
                log.warn("hold queue {}: {}", queue.number(), e.toString());
                sleepQuietly();
            }
        }
    }

    private void sleepQuietly() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    /** Stops the thread; what it still holds is answered by the kernel when the queue closes (dropped). */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(2000);
    }
}
