// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import java.util.concurrent.TimeUnit;

/**
 * When the uplink sends its waiting events. Each send is a gRPC message that the agent, its
 * channel's event loop and the control plane pay for whatever its size, on the node's cores. So
 * while someone watches the node live, every tick (100 ms); while only the flow history wants
 * verdicts ({@code VerdictDemand.history_only}), once a second, or sooner when a batch is full.
 * One thread (the uplink's executor).
 */
final class SendPace {
    static final long TICK_MILLIS = 100;
    static final long HISTORY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final int batch;
    private boolean historyOnly;
    private long lastSent;
    private boolean sentOnce;

    SendPace(int batch) {
        this.batch = batch;
    }

    void demand(boolean historyOnly) {
        this.historyOnly = historyOnly;
    }

    /** Whether a tick at {@code nowNanos} with {@code waiting} events queued sends them (and the lost count). */
    boolean due(long nowNanos, int waiting) {
        return !historyOnly || waiting >= batch || !sentOnce || nowNanos - lastSent >= HISTORY_NANOS;
    }

    void flushed(long nowNanos) {
        lastSent = nowNanos;
        sentOnce = true;
    }
}
