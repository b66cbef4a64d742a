// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Errno;
import io.kubeverdict.jni.NativeException;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.jni.NftablesException;
import io.kubeverdict.jni.XtQueueRule;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Owns our nftables table in the network namespace of the thread that made the {@link Nftables}
 * context (and calls this manager; libnftables sockets live in that thread's namespace).
 *
 * <ol>
 *   <li>{@link #start} builds the table (one inet table; ip + ip6 tables when this kernel's
 *       nft_compat refuses the NFQUEUE target in inet, see {@link TableLayout}) in one transaction, replacing a leftover of an earlier run
 *       atomically (delete + create in the same transaction); on the xtables path the shim then
 *       swaps the queue chain's placeholder for the NFQUEUE target in a second transaction (in
 *       between, the placeholder acts like the configured failure mode: accept when fail-open,
 *       drop when fail-closed).</li>
 *   <li>{@link #update} changes only set elements, in one transaction (add/delete diffs against what
 *       it applied last); the table and the queue rule stay untouched while traffic flows. Should a
 *       diff be refused (someone edited our sets), the sets are rewritten in one flush+add
 *       transaction.</li>
 *   <li>{@link #remove} deletes the table (agent uninstall; not needed on restart).</li>
 * </ol>
 * Calls are serialised; not for the packet path.
 */
public final class NftManager {
    private final Nftables nft;
    private RulesetConfig config;
    private final boolean layoutForced;
    private PodAddresses applied;
    private boolean started;

    private NftManager(Nftables nft, RulesetConfig config, boolean layoutForced) {
        this.nft = nft;
        this.config = config;
        this.layoutForced = layoutForced;
    }

    /**
     * A manager for table {@code table}; {@code forcedPath} null means: probe the kernel
     * ({@link QueuePathProbe}), otherwise use that path (tests, or an operator override).
     */
    public static NftManager create(
            Nftables nft, String table, int queueNumber, boolean failOpen, QueuePath forcedPath) {
        return create(nft, table, queueNumber, failOpen, forcedPath, null);
    }

    /**
     * Like {@link #create(Nftables, String, int, boolean, QueuePath)}; {@code forcedLayout} null
     * means: one inet table, falling back to ip + ip6 tables when nft_compat refuses the xtables
     * target in the inet family.
     */
    public static NftManager create(
            Nftables nft,
            String table,
            int queueNumber,
            boolean failOpen,
            QueuePath forcedPath,
            TableLayout forcedLayout) {
        return create(nft, table, queueNumber, failOpen, forcedPath, forcedLayout, CutAction.DROP);
    }

    /** Like {@link #create(Nftables, String, int, boolean, QueuePath, TableLayout)}, with what cut connections get. */
    public static NftManager create(
            Nftables nft,
            String table,
            int queueNumber,
            boolean failOpen,
            QueuePath forcedPath,
            TableLayout forcedLayout,
            CutAction cutAction) {
        return create(nft, table, queueNumber, 1, failOpen, forcedPath, forcedLayout, cutAction);
    }

    /** Like {@link #create(Nftables, String, int, boolean, QueuePath, TableLayout, CutAction)}, over {@code queues} queues. */
    public static NftManager create(
            Nftables nft,
            String table,
            int queueNumber,
            int queues,
            boolean failOpen,
            QueuePath forcedPath,
            TableLayout forcedLayout,
            CutAction cutAction) {
        return create(
                nft, table, queueNumber, queues, failOpen, forcedPath, forcedLayout, cutAction, CacheSettings.OFF);
    }

    /** Like {@link #create(Nftables, String, int, int, boolean, QueuePath, TableLayout, CutAction)}, with a verdict cache. */
    public static NftManager create(
            Nftables nft,
            String table,
            int queueNumber,
            int queues,
            boolean failOpen,
            QueuePath forcedPath,
            TableLayout forcedLayout,
            CutAction cutAction,
            CacheSettings cache) {
        QueuePath path = forcedPath != null ? forcedPath : QueuePathProbe.detect(nft, table);
        TableLayout layout = forcedLayout != null ? forcedLayout : TableLayout.INET;
        return new NftManager(
                nft,
                new RulesetConfig(table, queueNumber, failOpen, path, layout, cutAction, queues, cache),
                forcedLayout != null);
    }

    /** The configuration in use (its layout may change once, in {@link #start}). */
    public synchronized RulesetConfig config() {
        return config;
    }

    public synchronized QueuePath path() {
        return config.path();
    }

    /** What the kernel holds now, as far as this manager applied it. */
    public synchronized PodAddresses applied() {
        return applied;
    }

    /**
     * Installs the table with the given addresses. Returns true when a table of ours from an
     * earlier run was found (and replaced).
     */
    public synchronized boolean start(PodAddresses addresses) {
        return start(addresses, 0);
    }

    /**
     * As {@link #start(PodAddresses)}, with an empty verdict cache (when configured) whose current
     * tag is {@code cacheMark} ({@link CacheMarks#mark}; 0: nothing is added to it).
     */
    public synchronized boolean start(PodAddresses addresses, int cacheMark) {
        Objects.requireNonNull(addresses);
        boolean leftover = tableExists();
        nft.run(RulesetRenderer.replaceTable(config, addresses, cacheMark));
        if (config.path() == QueuePath.XT_NFQUEUE) {
            try {
                installXtRules();
            } catch (NativeException e) {
                if (layoutForced || config.layout() != TableLayout.INET || !compatRefusedFamily(e.errno())) {
                    throw e;
                }
                // this kernel's nft_compat will not put NFQUEUE in an inet table: ip + ip6 tables
                // (the replacement transaction also removes the inet table just made)
                config = config.withLayout(TableLayout.SPLIT);
                nft.run(RulesetRenderer.replaceTable(config, addresses, cacheMark));
                installXtRules();
            }
        }
        applied = addresses;
        started = true;
        return leftover;
    }

    /** Brings the sets to {@code desired} in one transaction; a no-op when nothing changed. */
    public synchronized void update(PodAddresses desired) {
        Objects.requireNonNull(desired);
        if (!started) {
            throw new IllegalStateException("start() first");
        }
        String diff = RulesetRenderer.diff(config, applied, desired);
        if (diff.isEmpty()) {
            return;
        }
        try {
            nft.run(diff);
        } catch (NftablesException e) {
            // our view and the kernel disagree (an element added/deleted behind our back): rewrite
            nft.run(RulesetRenderer.resync(config, desired));
        }
        applied = desired;
    }

    /**
     * A new generation: brings the sets to {@code desired} and, in the same transaction, empties
     * the verdict cache and makes {@code cacheMark} its only tag (0: nothing may be added). Runs
     * even when the addresses did not change; without a cache it is {@link #update(PodAddresses)}.
     */
    public synchronized void update(PodAddresses desired, int cacheMark) {
        Objects.requireNonNull(desired);
        if (!started) {
            throw new IllegalStateException("start() first");
        }
        String reset = CacheRules.cacheReset(config, cacheMark);
        if (reset.isEmpty()) {
            update(desired);
            return;
        }
        try {
            nft.run(reset + RulesetRenderer.diff(config, applied, desired));
        } catch (NftablesException e) {
            // our view and the kernel disagree (an element added/deleted behind our back): rewrite
            nft.run(reset + RulesetRenderer.resync(config, desired));
        }
        applied = desired;
    }

    /**
     * From this transaction's commit on no packet adds a key to the verdict cache (its tags are
     * removed); the keys it holds still answer. A no-op without a cache.
     */
    public synchronized void closeCache() {
        String close = CacheRules.cacheClose(config);
        if (started && !close.isEmpty()) {
            nft.run(close);
        }
    }

    /** Empties the verdict cache and makes {@code cacheMark} its only tag (0: none), in one transaction; a no-op without a cache. */
    public synchronized void resetCache(int cacheMark) {
        String reset = CacheRules.cacheReset(config, cacheMark);
        if (started && !reset.isEmpty()) {
            nft.run(reset);
        }
    }

    /** Empties the verdict cache and lets nothing be added to it until the next generation (a no-op without one). */
    public synchronized void disableCache() {
        String reset = CacheRules.cacheReset(config, 0);
        if (started && !reset.isEmpty()) {
            nft.run(reset);
        }
    }

    /** Renews the verdict cache's liveness ({@link RulesetRenderer#cacheAlive}); a no-op without a cache or table. */
    public synchronized void renewCacheLiveness() {
        String alive = CacheRules.cacheAlive(config);
        if (started && !alive.isEmpty()) {
            nft.run(alive);
        }
    }

    /** The verdict cache's counters and size as the kernel has them now; zeros without a cache or table. */
    public synchronized CacheCounters cacheCounters() {
        return started ? CacheCounters.read(nft, config) : CacheCounters.NONE;
    }

    /** Deletes our table if present. */
    public synchronized void remove() {
        nft.run(RulesetRenderer.deleteTable(config));
        started = false;
        applied = null;
    }

    /** nft's listing of our table(s) (for tools and tests). */
    public synchronized String listTable() {
        StringBuilder out = new StringBuilder();
        for (String family : RulesetRenderer.families(config)) {
            out.append(nft.run("list table " + family + " " + config.table()));
        }
        return out.toString();
    }

    private void installXtRules() {
        for (String family : RulesetRenderer.families(config)) {
            int nfproto = family.equals("inet")
                    ? XtQueueRule.FAMILY_INET
                    : family.equals("ip") ? XtQueueRule.FAMILY_IPV4 : XtQueueRule.FAMILY_IPV6;
            XtQueueRule.install(
                    nfproto,
                    config.table(),
                    RulesetRenderer.CHAIN_QUEUE,
                    config.queueNumber(),
                    config.queues(),
                    config.failOpen());
        }
    }

    /** Errnos with which nft_compat turns down a target for a family it does not serve. */
    private static boolean compatRefusedFamily(int errno) {
        return errno == Errno.EOPNOTSUPP
                || errno == Errno.EINVAL
                || errno == Errno.EAFNOSUPPORT
                || errno == Errno.EPROTONOSUPPORT
                || errno == Errno.ENOENT;
    }

    private boolean tableExists() {
        String tables = nft.run("list tables");
        return Pattern.compile("(?m)^table (inet|ip|ip6) " + Pattern.quote(config.table()) + "$")
                .matcher(tables)
                .find();
    }
}
