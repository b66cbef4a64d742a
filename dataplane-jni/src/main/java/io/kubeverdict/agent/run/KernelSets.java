// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.metrics.NftApplyMetrics;
import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.state.SelectedAddresses;
import io.kubeverdict.agent.state.SelectedSetsProgrammer;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connects the state enforcer to the nftables manager. The table is first written at the first
 * in-sync state, not at process start: a table left by a killed agent keeps queueing its pods
 * (answered by the configured default until then) instead of being emptied by a restart, and is
 * replaced atomically by the right one at InSync. After that only set elements change.
 */
final class KernelSets implements SelectedSetsProgrammer {
    private static final Logger log = LoggerFactory.getLogger(KernelSets.class);
    private final NftManager manager;
    private final NftApplyMetrics metrics;
    private volatile boolean started;

    KernelSets(NftManager manager, NftApplyMetrics metrics) {
        this.manager = manager;
        this.metrics = metrics;
    }

    @Override
    public void program(SelectedAddresses selected) {
        program(selected, 0, false);
    }

    /**
     * With the verdict cache: the table's first write (an empty cache tagged {@code cacheMark});
     * should the table be written already, the sets, an emptied cache and its new tag in one
     * transaction. When that fails, the cache is emptied and untagged on its own (if even that
     * fails, the table keeps keys of the state before: the stream resyncs, whose next generation
     * tries again).
     */
    @Override
    public void program(SelectedAddresses selected, int cacheMark) {
        withCacheDisabledOnFailure(() -> program(selected, cacheMark, true));
    }

    @Override
    public void closeCache() {
        if (started) {
            withCacheDisabledOnFailure(manager::closeCache);
        }
    }

    @Override
    public void resetCache(int cacheMark) {
        if (started) {
            withCacheDisabledOnFailure(() -> manager.resetCache(cacheMark));
        }
    }

    private void withCacheDisabledOnFailure(Runnable change) {
        try {
            change.run();
        } catch (RuntimeException e) {
            if (started) {
                try {
                    manager.disableCache();
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
            }
            throw e;
        }
    }

    private void program(SelectedAddresses selected, int cacheMark, boolean cached) {
        List<String> all = new ArrayList<>(selected.ipv4());
        all.addAll(selected.ipv6());
        SelectedAddresses.Guarded g = selected.guarded();
        PodAddresses addresses = PodAddresses.of(all)
                .withGuard(new PodAddresses.Guard(g.ranges4(), g.ranges6(), g.known4(), g.known6()));
        boolean wholeTable = !started;
        long begin = System.nanoTime();
        boolean ok = false;
        try {
            apply(addresses, selected, cacheMark, cached);
            ok = true;
        } finally {
            metrics.applied(wholeTable, System.nanoTime() - begin, ok);
        }
    }

    private void apply(PodAddresses addresses, SelectedAddresses selected, int cacheMark, boolean cached) {
        if (!started) {
            boolean leftover = manager.start(addresses, cacheMark);
            started = true;
            log.info(
                    "nftables table {} written ({}), {} selected addresses, queue path {}",
                    manager.config().table(),
                    leftover ? "replaced a leftover" : "new",
                    selected.size(),
                    manager.path());
        } else if (cached) {
            manager.update(addresses, cacheMark);
        } else {
            manager.update(addresses);
        }
    }

    boolean started() {
        return started;
    }
}
