package io.kubeverdict.agent.nft;

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
 *   <li>{@link #start} builds the table in one transaction, replacing a leftover of an earlier run
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
    private final RulesetConfig config;
    private PodAddresses applied;
    private boolean started;

    private NftManager(Nftables nft, RulesetConfig config) {
        this.nft = nft;
        this.config = config;
    }

    /**
     * A manager for table {@code table}; {@code forcedPath} null means: probe the kernel
     * ({@link QueuePathProbe}), otherwise use that path (tests, or an operator override).
     */
    public static NftManager create(Nftables nft, String table, int queueNumber, boolean failOpen, QueuePath forcedPath) {
        QueuePath path = forcedPath != null ? forcedPath : QueuePathProbe.detect(nft, table);
        return new NftManager(nft, new RulesetConfig(table, queueNumber, failOpen, path));
    }

    public RulesetConfig config() {
        return config;
    }

    public QueuePath path() {
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
        Objects.requireNonNull(addresses);
        boolean leftover = tableExists();
        nft.run(RulesetRenderer.replaceTable(config, addresses));
        if (config.path() == QueuePath.XT_NFQUEUE) {
            XtQueueRule.install(XtQueueRule.FAMILY_INET, config.table(), RulesetRenderer.CHAIN_QUEUE,
                    config.queueNumber(), config.failOpen());
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

    /** Deletes our table if present. */
    public synchronized void remove() {
        nft.run(RulesetRenderer.deleteTable(config));
        started = false;
        applied = null;
    }

    /** nft's listing of our table (for tools and tests). */
    public synchronized String listTable() {
        return nft.run("list table inet " + config.table());
    }

    private boolean tableExists() {
        String tables = nft.run("list tables inet");
        return Pattern.compile("(?m)^table inet " + Pattern.quote(config.table()) + "$").matcher(tables).find();
    }
}
