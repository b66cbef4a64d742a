// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.jni;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Closing a queue while its loop's thread is inside a receive (the agent's shutdown when a
 * verdict thread outlasts its join, security audit L5) must not free the shim's queue under that
 * thread: the receive would write into freed memory when a datagram comes.
 */
@KernelTest
class QueueCloseKernelTest {
    private static final int QUEUE = 330;
    /** Long enough that the close surely comes while the thread waits in it. */
    private static final int RECEIVE_MILLIS = 1500;

    private DpTestbed bed;
    private NetnsThread node;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, QUEUE, false, Dataplane.BOTH_PODS));
        node = bed.own(new NetnsThread(bed.node.path()));
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    @Test
    void closeNeverUnbindsUnderAReceiveUnderWay() throws Exception {
        NfQueue queue = node.call(() -> new NfQueue(QUEUE, 0));
        PacketBatch batch = queue.batch(4);
        AtomicBoolean returned = new AtomicBoolean();
        Thread receiver = new Thread(
                () -> {
                    try {
                        batch.receive(RECEIVE_MILLIS);
                    } catch (RuntimeException e) {
                        // a receive on a closed queue may be refused; it must not crash
                    } finally {
                        returned.set(true);
                    }
                },
                "queue-close-test-receiver");
        receiver.setDaemon(true);
        receiver.start();
        awaitInsideNativeReceive(receiver);

        queue.close();
        boolean bound = counters().isPresent();
        assertThat(returned.get() || bound)
                .as("close returned while the receive was still inside, and had already unbound (freed) the queue")
                .isTrue();

        receiver.join(10_000);
        assertThat(returned).isTrue();
        for (int i = 0; i < 250 && counters().isPresent(); i++) {
            Thread.sleep(20);
        }
        assertThat(counters()).as("unbound once the receive returned").isEmpty();
    }

    private Optional<QueueCounters> counters() throws Exception {
        return node.call(() -> QueueCounters.read(QueueCounters.PROC_FILE, QUEUE));
    }

    /** Until the thread's innermost frame is the shim's receive. */
    private static void awaitInsideNativeReceive(Thread thread) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            StackTraceElement[] stack = thread.getStackTrace();
            if (stack.length > 0
                    && stack[0].isNativeMethod()
                    && stack[0].getClassName().equals(NfqNative.class.getName())
                    && stack[0].getMethodName().equals("receive")) {
                return;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the receiver never entered the native receive");
    }
}
