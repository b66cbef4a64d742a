// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the verdict cache answering while the agent lives: renews the table's liveness elements
 * ({@link RulesetRenderer#cacheAlive}) every {@link #PERIOD_MILLIS} on its own thread. When the
 * agent dies (or this thread stalls for {@link CacheSettings#LIVENESS_SECONDS}), the cache stops
 * accepting and new connections meet the queue again, as the fail mode says. A failed renewal is
 * logged once (then again when it recovers) and retried; it never stops the agent.
 */
public final class CacheHeartbeat implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CacheHeartbeat.class);
    public static final long PERIOD_MILLIS = 500;

    private final Runnable renew;
    private final Runnable end;
    private final Thread thread;
    private volatile boolean running = true;

    /** @param renew one renewal (e.g. runs {@link RulesetRenderer#cacheAlive} in the table's namespace) */
    public CacheHeartbeat(Runnable renew) {
        this(renew, () -> {});
    }

    /**
     * @param end run once at {@link #close}, after the last renewal: ends the liveness at once
     *     ({@link RulesetRenderer#cacheDead}), so a clean stop that keeps the table leaves no cache answering
     */
    public CacheHeartbeat(Runnable renew, Runnable end) {
        this.renew = Objects.requireNonNull(renew);
        this.end = Objects.requireNonNull(end);
        this.thread = new Thread(this::run, "kv-cache-heartbeat");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void run() {
        boolean failing = false;
        while (running) {
            try {
                renew.run();
                if (failing) {
                    log.info("verdict cache liveness renewed again");
                }
                failing = false;
            } catch (RuntimeException e) {
                if (!failing) {
                    log.warn(
                            "renewing the verdict cache's liveness failed (the cache stops answering until it works)",
                            e);
                }
                failing = true;
            }
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
        try {
            end.run();
        } catch (RuntimeException e) {
            log.debug("ending the verdict cache's liveness failed (the table may be gone already)", e);
        }
    }
}
