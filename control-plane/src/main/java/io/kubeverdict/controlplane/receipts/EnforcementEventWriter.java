// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubeverdict.controlplane.events.PolicyEvent;
import io.kubeverdict.runtime.FatalThreads;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts the Events {@link EnforcementEvents} decides on NetworkPolicies, once a second on its own
 * thread, at most {@link #EVENTS_PER_SWEEP} a sweep, only while {@code writer} says so (the Lease
 * holder). A failed post (429, API away) stops the sweep and pauses the next ones 1 s doubling to
 * 60 s; the Event stays due.
 */
public final class EnforcementEventWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EnforcementEventWriter.class);
    static final int EVENTS_PER_SWEEP = 5;
    private static final long MAX_PAUSE_NANOS = 60_000_000_000L;

    private final KubernetesClient client;
    private final ReplicatedReceipts receipts;
    private final EnforcementEvents events;
    private final BooleanSupplier writer;
    private final PeerReceipts whenNotAsked;
    private final LongSupplier unixNanos;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "enforcement-events");
        t.setDaemon(true);
        return t;
    });
    // The sweep thread's.
    private boolean wasWriter;
    private long baselineUnixNanos;
    private int failures;
    private long pausedUntilNanos;

    /**
     * @param whenNotAsked what peers say when none is configured (see {@link StatusConditionWriter})
     * @param unixNanos the receipts' clock
     */
    public EnforcementEventWriter(
            KubernetesClient client,
            ReplicatedReceipts receipts,
            Duration stallThreshold,
            BooleanSupplier writer,
            PeerReceipts whenNotAsked,
            LongSupplier unixNanos) {
        this.client = client;
        this.receipts = receipts;
        this.events = new EnforcementEvents(stallThreshold);
        this.writer = writer;
        this.whenNotAsked = whenNotAsked;
        this.unixNanos = unixNanos;
    }

    public EnforcementEventWriter start() {
        thread.scheduleWithFixedDelay(FatalThreads.guard(this::sweep), 1, 1, TimeUnit.SECONDS);
        return this;
    }

    /** One sweep (the thread's; tests call it directly). */
    void sweep() {
        boolean writing = writer.getAsBoolean();
        if (writing && !wasWriter) {
            baselineUnixNanos = unixNanos.getAsLong(); // what was enforced before this replica wrote is not news
        }
        wasWriter = writing;
        if (!writing || System.nanoTime() - pausedUntilNanos < 0) {
            return;
        }
        ReplicatedReceipts.Look look = receipts.all(EnforcementEvents.NAMED_LAGGING_NODES, whenNotAsked);
        Map<PolicyRef, Receipt> byRef = new HashMap<>();
        look.receipts().forEach(r -> byRef.put(r.ref(), r));
        List<EnforcementEvents.Due> due = events.due(
                look.receipts(), byRef::get, look::unknown, unixNanos.getAsLong(), baselineUnixNanos, EVENTS_PER_SWEEP);
        for (int i = 0; i < due.size(); i++) {
            EnforcementEvents.Due d = due.get(i);
            try {
                new PolicyEvent(
                                "networking.k8s.io/v1",
                                "NetworkPolicy",
                                d.ref().namespace(),
                                d.ref().name(),
                                d.warning() ? "Warning" : "Normal",
                                d.reason(),
                                d.message())
                        .post(client);
                failures = 0;
            } catch (RuntimeException e) {
                due.subList(i, due.size()).forEach(events::failed); // all of them due again
                failures++;
                long pause = Math.min(MAX_PAUSE_NANOS, 1_000_000_000L << Math.min(failures - 1, 6));
                pausedUntilNanos = System.nanoTime() + pause;
                if (failures == 1) { // once per streak: a missing RBAC rule or an API away shows
                    log.warn("posting {} on {} failed ({}); retrying with backoff", d.reason(), d.ref(), e.toString());
                }
                return;
            }
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
