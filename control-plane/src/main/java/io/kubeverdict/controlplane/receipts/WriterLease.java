// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which control-plane replica writes to the API (status conditions, Events): the holder of a
 * coordination.k8s.io Lease, taken and renewed by fabric8's leader elector. A replica that loses
 * the Lease (renewal failed past the deadline) stops writing at once and tries again; every
 * replica keeps answering reads. {@link #holder()} is what the writers ask before each sweep.
 */
public final class WriterLease implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WriterLease.class);
    public static final String DEFAULT_NAME = "kube-verdict-control-plane-writer";

    /** The Lease's place and timing (Kubernetes' usual 15 s / 10 s / 2 s by default). */
    public record Settings(
            String namespace, String name, String identity, Duration duration, Duration renewDeadline, Duration retry) {
        public static Settings defaults(String namespace, String identity) {
            return new Settings(
                    namespace,
                    DEFAULT_NAME,
                    identity,
                    Duration.ofSeconds(15),
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(2));
        }

        public Settings withName(String leaseName) {
            return new Settings(namespace, leaseName, identity, duration, renewDeadline, retry);
        }
    }

    private final KubernetesClient client;
    private final Settings settings;
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "writer-lease");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean holder;
    private volatile long heldSinceNanos;
    private volatile boolean closed;
    private volatile CompletableFuture<?> running;

    public WriterLease(KubernetesClient client, Settings settings) {
        this.client = client;
        this.settings = settings;
    }

    public WriterLease start() {
        elect();
        return this;
    }

    /** Whether this replica holds the Lease now (and so writes). */
    public boolean holder() {
        return holder;
    }

    /** System.nanoTime() when this replica last became the holder (meaningful while {@link #holder()}). */
    public long heldSinceNanos() {
        return heldSinceNanos;
    }

    private void elect() {
        if (closed) {
            return;
        }
        LeaderElector elector = client.leaderElector()
                .withConfig(new LeaderElectionConfigBuilder()
                        .withName(settings.name())
                        .withLock(new LeaseLock(settings.namespace(), settings.name(), settings.identity()))
                        .withLeaseDuration(settings.duration())
                        .withRenewDeadline(settings.renewDeadline())
                        .withRetryPeriod(settings.retry())
                        .withReleaseOnCancel(true)
                        .withLeaderCallbacks(new LeaderCallbacks(
                                () -> {
                                    heldSinceNanos = System.nanoTime();
                                    holder = true;
                                    log.info(
                                            "this replica ({}) holds the writer Lease {}",
                                            settings.identity(),
                                            settings.name());
                                },
                                () -> {
                                    holder = false;
                                    log.info("this replica ({}) no longer holds the writer Lease", settings.identity());
                                },
                                leader -> log.info("the writer Lease {} is held by {}", settings.name(), leader)))
                        .build())
                .build();
        CompletableFuture<?> f = elector.start();
        running = f;
        // The elector ends when leadership is lost or the API refuses: stand again after a pause.
        f.whenComplete((v, e) -> {
            holder = false;
            if (!closed) {
                if (e != null) {
                    log.warn("the writer Lease election ended ({}); standing again", e.toString());
                }
                retries.schedule(this::elect, settings.retry().toMillis(), TimeUnit.MILLISECONDS);
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        holder = false;
        CompletableFuture<?> f = running;
        if (f != null) {
            f.cancel(true); // releases the Lease (releaseOnCancel) so another replica takes over at once
        }
        retries.shutdownNow();
    }
}
