// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import io.kubeverdict.jni.Nftables;
import io.kubeverdict.jni.NftablesException;

/**
 * Reads how many packets our table(s) sent to the queue ({@link RulesetRenderer#QUEUED_COUNTER},
 * both families added up), through an nft context of the caller's own: libnftables contexts are
 * not shared between threads.
 */
public final class QueuedCounter {
    private QueuedCounter() {}

    /** The count; a table that is not there (yet, or any more) counts 0. */
    public static long read(Nftables nft, RulesetConfig config) {
        long n = 0;
        for (String table : RulesetRenderer.tableRefs(config)) {
            try {
                n += CacheCounters.packets(nft.run("list counter " + table + " " + RulesetRenderer.QUEUED_COUNTER));
            } catch (NftablesException e) {
                // no table (before the first apply, or removed at exit): nothing was queued through it
            }
        }
        return n;
    }
}
