// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.grpc.Channel;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Dials the control plane without a call and waits a while for the connection: while it is away
 * the agent only dials (a refused TCP connect costs one SYN and its reset, and no work on a
 * server), often, so that a control plane that comes back is found within a fraction of a second;
 * the Sync stream is opened once a connection stands. The channel's own connect backoff (1 s
 * growing to two minutes) is cut short first, so each dial happens now. (A channel that failed
 * stays in TRANSIENT_FAILURE while it dials again, so only READY says that a dial succeeded.)
 */
final class ChannelDial {
    enum Outcome {
        /** Connected: open the stream. */
        READY,
        /** Not connected within the wait (refused, unreachable, handshake failed): dial again. */
        NOT_READY,
        /** Not a channel that can be watched, or shut down: open the stream and see. */
        UNKNOWN
    }

    /** How long a connection under way is waited for (a TLS handshake on a cold start, a black hole). */
    static final Duration CONNECT_BOUND = Duration.ofSeconds(20);

    private ChannelDial() {}

    /** Dials now and waits up to {@code wait} for a connection (longer while one is under way). */
    static Outcome dial(Channel channel, Duration wait) throws InterruptedException {
        if (!(channel instanceof ManagedChannel managed)) {
            return Outcome.UNKNOWN;
        }
        long deadline = System.nanoTime() + wait.toNanos();
        long connectDeadline = System.nanoTime() + CONNECT_BOUND.toNanos();
        ConnectivityState state = managed.getState(false);
        // Watch before dialling, so that a connection made at once is still seen.
        CountDownLatch changed = watch(managed, state);
        managed.resetConnectBackoff();
        state = managed.getState(true); // from IDLE: connect
        while (true) {
            switch (state) {
                case READY:
                    return Outcome.READY;
                case SHUTDOWN:
                    return Outcome.UNKNOWN;
                case IDLE:
                    managed.getState(true);
                    break;
                default: // CONNECTING, TRANSIENT_FAILURE: wait for the dial
            }
            // A connection under way (the first dial from IDLE shows it) is waited for to its end.
            long until = state == ConnectivityState.CONNECTING ? Math.max(deadline, connectDeadline) : deadline;
            long left = until - System.nanoTime();
            if (left <= 0 || !changed.await(left, TimeUnit.NANOSECONDS)) {
                return Outcome.NOT_READY;
            }
            state = managed.getState(false);
            changed = watch(managed, state);
            state = managed.getState(false); // a change between the read and the watch is not missed
        }
    }

    private static CountDownLatch watch(ManagedChannel channel, ConnectivityState from) {
        CountDownLatch changed = new CountDownLatch(1);
        channel.notifyWhenStateChanged(from, changed::countDown);
        return changed;
    }
}
