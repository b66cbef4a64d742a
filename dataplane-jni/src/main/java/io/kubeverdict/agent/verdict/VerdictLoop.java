// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import io.kubeverdict.agent.nft.CacheMarks;
import io.kubeverdict.jni.NfQueue;
import io.kubeverdict.jni.PacketBatch;
import io.kubeverdict.runtime.FatalThreads;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The thread that answers an NFQUEUE: receive a batch (one JNI call), have each packet decided
 * ({@link PacketDecider}: parse, then ask the current {@link Judge}), write the verdict into the
 * batch, send all verdicts (one JNI call). Nothing is allocated per packet.
 *
 * <p>The judge is a volatile reference: {@link #judge(Judge)} swaps it atomically (a new
 * snapshot) and the next batch uses it. Packets that cannot be parsed are dropped; packets whose
 * judge throws get {@code judgeFailureAllows}, and so does every packet of a batch an exception
 * abandons before its verdicts are sent (answered at once, not left to a later batch verdict). {@link #close()} stops the thread within about one receive
 * timeout after it has answered what it took; the caller then closes the queue.
 */
public final class VerdictLoop implements AutoCloseable {
    /** How long one receive waits before the loop checks whether it should stop. */
    static final int RECEIVE_TIMEOUT_MILLIS = 100;

    private static final long BACKOFF_MILLIS = 50;
    /**
     * One packet in this many is timed for the processing-time histogram (a power of two); the
     * others report {@link VerdictObserver#NOT_TIMED}. Verdict counts are exact.
     */
    public static final int TIMING_SAMPLE = 64;

    private final NfQueue queue;
    private final PacketBatch batch;
    private final VerdictObserver observer;
    private final PacketDecider decider;
    private final boolean judgeFailureAllows;
    private int untilTimed; // packets before the next timed one (this loop's thread only)
    private final Thread thread;
    private volatile Judge judge;
    /** Whether packets the judge holds go to a hold queue ({@link #holdTo}); without one they are dropped. */
    private volatile boolean holding;

    private volatile boolean running = true;
    // Batches taken from the queue / answered: a batch is answered once its verdicts are sent.
    private volatile long batchesTaken;
    private volatile long batchesAnswered;

    /**
     * Starts the loop on a new thread named after the queue.
     *
     * @param queue a bound queue; this loop takes its batch
     * @param batchSize packets per receive (e.g. 64)
     * @param judgeFailureAllows the verdict when the judge throws (the agent's fail mode); packets
     *     the parser cannot read are dropped whatever it is
     */
    public VerdictLoop(
            NfQueue queue, int batchSize, Judge judge, VerdictObserver observer, boolean judgeFailureAllows) {
        this.queue = queue;
        this.batch = queue.batch(batchSize);
        this.judge = Objects.requireNonNull(judge);
        this.observer = Objects.requireNonNull(observer);
        this.decider = new PacketDecider(this.observer, judgeFailureAllows);
        this.judgeFailureAllows = judgeFailureAllows;
        this.thread = FatalThreads.worker("verdict-loop-q" + queue.number(), this::run);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Replaces the judge; packets of the next batch see the new one. */
    public void judge(Judge newJudge) {
        judge = Objects.requireNonNull(newJudge);
    }

    public boolean isRunning() {
        return thread.isAlive();
    }

    private void run() {
        while (running) {
            try {
                int n = batch.receive(RECEIVE_TIMEOUT_MILLIS);
                if (n == 0) {
                    continue;
                }
                batchesTaken++; // before any verdict of the batch is decided (single writer)
                decideAll(n);
                batch.sendVerdicts();
            } catch (RuntimeException e) {
                answerAbandoned();
                observer.queueFailed(e);
                pause();
            } finally {
                batchesAnswered = batchesTaken;
            }
        }
    }

    /**
     * Answers a batch that an exception left between receive and sendVerdicts, all with the fail
     * mode's verdict (drop when fail-closed). Unanswered, its packets would wait in the kernel
     * until a later run of equal verdicts, sent as one NFQNL_MSG_VERDICT_BATCH for the run's last
     * id, answered them too, with that run's verdict (security audit L3). Held verdicts are
     * overwritten as well: an abandoned packet is never moved to the hold queue. If this send fails
     * too, the packets stay queued; that failure is reported like the first.
     */
    private void answerAbandoned() {
        int n = batch.size();
        if (n == 0) {
            return;
        }
        try {
            for (int i = 0; i < n; i++) {
                if (judgeFailureAllows) {
                    batch.accept(i);
                } else {
                    batch.drop(i);
                }
            }
            batch.sendVerdicts();
        } catch (RuntimeException e) {
            observer.queueFailed(e);
        }
    }

    private void decideAll(int n) {
        Judge current = judge;
        ByteBuffer buffer = batch.buffer();
        for (int i = 0; i < n; i++) {
            boolean timed = --untilTimed < 0;
            if (timed) {
                untilTimed = TIMING_SAMPLE - 1;
            }
            switch (decider.verdict(
                    current, buffer, batch.dataOffset(i), batch.copiedLength(i), batch.packetLength(i), timed)) {
                case PacketDecider.ACCEPT -> batch.accept(i);
                case PacketDecider.ACCEPT_CACHEABLE -> {
                    int mark = batch.mark(i);
                    if ((mark & CacheMarks.MASK) == 0) {
                        batch.repeatMarked(i, mark | decider.cacheMark());
                    } else {
                        batch.accept(i); // tag bits in use by someone else: not cached, and left as they are
                    }
                }
                case PacketDecider.HOLD -> {
                    if (holding) {
                        batch.hold(i);
                    } else {
                        batch.drop(i); // no hold queue: a packet the state cannot judge yet is not let through
                    }
                }
                default -> batch.drop(i);
            }
        }
    }

    /** Packets the judge answers {@link Judge#HOLD} move to queue {@code holdQueue} from now on. */
    public void holdTo(int holdQueue, boolean bypass) {
        queue.holdTo(holdQueue, bypass);
        holding = true;
    }

    /**
     * Waits until every batch taken before this call has been answered (at most timeoutMillis).
     * After a new judge or state is in place, this is the point from which no verdict decided by
     * the old one is still on its way to the kernel: a connection the old state admitted is in the
     * conntrack table by then (a verdict is applied, and the packet's entry confirmed, within the
     * sendmsg that carries it). Returns false on timeout.
     */
    public boolean awaitAnswered(long timeoutMillis) throws InterruptedException {
        long target = batchesTaken;
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (batchesAnswered < target) {
            if (System.nanoTime() > deadline || !thread.isAlive()) {
                return batchesAnswered >= target;
            }
            Thread.sleep(1);
        }
        return true;
    }

    private void pause() {
        try {
            Thread.sleep(BACKOFF_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /** Stops the thread and waits for it; the queue stays open (the caller owns it). */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(10L * RECEIVE_TIMEOUT_MILLIS + 5_000);
    }
}
