// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's clean stop, in its order: no more enforcing, stop syncing, the DNS table and (when
 * configured so) our table removed, then what the start opened closed in reverse (verdict loops
 * before their queues, the servers, the channel), and the nftables context last. The agent hands
 * over each part as it starts it, so a start that fails half-way closes what exists.
 *
 * <p>A sync thread that outlasts its stop is still applying a change, inside an nftables
 * transaction: the tables are then left as they are, and the nftables context is freed only once
 * that transaction has returned ({@link io.kubeverdict.jni.Nftables#close}).
 *
 * <p>The table is deleted only when configured so (fail-open, or --on-exit=remove): a
 * fail-closed agent's table stays, so that new connections of selected pods are dropped until the
 * next agent is in sync, exactly as after a crash; a rolling update never opens an unenforced gap.
 */
final class AgentShutdown {
    private static final Logger log = LoggerFactory.getLogger(AgentShutdown.class);

    private final String table;
    private final boolean removeTable;
    private final PendingEnforcer pending;
    /** What the start opened, closed in reverse order. */
    private final List<AutoCloseable> opened = new ArrayList<>();

    private BooleanSupplier stopSync;
    private Runnable removeDnsTable;
    private Runnable removePolicyTable;
    private AutoCloseable nftables;

    AgentShutdown(String table, boolean removeTable, PendingEnforcer pending) {
        this.table = table;
        this.removeTable = removeTable;
        this.pending = pending;
    }

    /** The list the start adds what it opens to. */
    List<AutoCloseable> opened() {
        return opened;
    }

    /** How to stop syncing: true once the sync thread has ended. */
    void sync(BooleanSupplier stop) {
        this.stopSync = stop;
    }

    void dnsTable(Runnable remove) {
        this.removeDnsTable = remove;
    }

    void policyTable(Runnable remove) {
        this.removePolicyTable = remove;
    }

    /** The context the tables are written with; closed after everything else. */
    void nftables(AutoCloseable nft) {
        this.nftables = nft;
    }

    /** Stops everything once; later calls find nothing left to stop. */
    synchronized void run() {
        pending.failed(new IllegalStateException("the agent is closing")); // no-op once ready
        if (stopSync != null) {
            if (!stopSync.getAsBoolean() && (removeDnsTable != null || removePolicyTable != null)) {
                // Still inside a transaction (audit L5): a removal now would race what it writes next.
                log.warn(
                        "the sync thread is still applying a change: nftables tables {} and {}_dns left as they are",
                        table,
                        table);
                removeDnsTable = null;
                removePolicyTable = null;
            }
            stopSync = null;
        }
        if (removeDnsTable != null) {
            try {
                removeDnsTable.run(); // nothing learns without an agent: answers pass unqueued
            } catch (RuntimeException e) {
                log.warn("could not remove nftables table {}_dns: {}", table, e.toString());
            }
            removeDnsTable = null;
        }
        if (removePolicyTable != null) {
            if (removeTable) {
                try {
                    removePolicyTable.run();
                    log.info("nftables table {} removed", table);
                } catch (RuntimeException e) {
                    log.warn("could not remove nftables table {}: {}", table, e.toString());
                }
            } else {
                log.info(
                        "nftables table {} kept: new connections of selected pods are dropped until an agent is back",
                        table);
            }
            removePolicyTable = null;
        }
        for (int i = opened.size() - 1; i >= 0; i--) {
            close(opened.get(i));
        }
        opened.clear();
        if (nftables != null) {
            close(nftables);
            nftables = null;
        }
    }

    private static void close(AutoCloseable part) {
        try {
            part.close();
        } catch (Exception e) {
            log.warn("closing {} failed: {}", part, e.toString());
        }
    }
}
