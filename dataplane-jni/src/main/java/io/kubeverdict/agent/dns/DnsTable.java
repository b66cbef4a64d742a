// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.agent.nft.TableLayout;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.jni.NftablesException;
import io.kubeverdict.jni.XtQueueRule;
import java.util.Objects;

/**
 * Applies {@link DnsRuleset}: the table exists only while some local pod is watched, because its
 * two base chains (prerouting, postrouting) are passed by every packet of every pod. It is
 * written whole when the first pod is watched (replacing a leftover of ours), then only the
 * watched-pod sets change, in one transaction each, and it is deleted when none is left. Uses
 * the queue path and table layout the policy table found to work. Acts in the network namespace
 * of the calling thread.
 */
public final class DnsTable {
    private final Nftables nft;
    private final String table;
    private final int queue;
    private QueuePath path;
    private TableLayout layout;
    private final NftManager policyTable;
    private PodAddresses applied;
    /** Whether the table is in the kernel (it is not while nothing is watched). */
    private boolean written;

    public DnsTable(Nftables nft, String table, int queue, QueuePath path, TableLayout layout) {
        this.nft = nft;
        this.table = table;
        this.queue = queue;
        this.path = path;
        this.layout = layout;
        this.policyTable = null;
    }

    /** Takes the queue path and layout from the policy table when first written (it may fall back to SPLIT). */
    public DnsTable(Nftables nft, String table, int queue, NftManager policyTable) {
        this.nft = nft;
        this.table = table;
        this.queue = queue;
        this.policyTable = policyTable;
    }

    /** Watched pods' addresses now in the kernel (null before the first {@link #program}). */
    public synchronized PodAddresses applied() {
        return applied;
    }

    /**
     * Makes the kernel's sets hold exactly {@code watched}: writes the table when the first pod is
     * watched, deletes it (and, on the first call, any leftover of ours) when none is.
     */
    public synchronized void program(PodAddresses watched) {
        Objects.requireNonNull(watched);
        if (watched.isEmpty()) {
            if (written || applied == null) {
                nft.run(DnsRuleset.deleteTable(table));
                written = false;
            }
            applied = watched;
            return;
        }
        if (!written) {
            if (policyTable != null) {
                path = policyTable.config().path();
                layout = policyTable.config().layout();
            }
            nft.run(DnsRuleset.replaceTable(table, queue, path, layout, watched));
            if (path == QueuePath.XT_NFQUEUE) {
                for (String family : DnsRuleset.families(layout)) {
                    int nfproto = family.equals("inet")
                            ? XtQueueRule.FAMILY_INET
                            : family.equals("ip") ? XtQueueRule.FAMILY_IPV4 : XtQueueRule.FAMILY_IPV6;
                    XtQueueRule.install(nfproto, table, DnsRuleset.CHAIN_QUEUE, queue, true);
                }
            }
            applied = watched;
            written = true;
            return;
        }
        String diff = DnsRuleset.diff(table, layout, applied, watched);
        if (diff.isEmpty()) {
            return;
        }
        try {
            nft.run(diff);
        } catch (NftablesException e) {
            nft.run(DnsRuleset.resync(table, layout, watched));
        }
        applied = watched;
    }

    /** Deletes the DNS table (answers then pass unqueued). */
    public synchronized void remove() {
        if (applied == null && policyTable != null) {
            return; // never written by us in this run
        }
        nft.run(DnsRuleset.deleteTable(table));
        applied = null;
        written = false;
    }
}
