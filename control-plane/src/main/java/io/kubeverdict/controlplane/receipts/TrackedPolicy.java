// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import java.util.Set;

/**
 * One policy as {@link PolicyReceipts} tracks it, read under its lock by the views built beside
 * it (what this replica tells its peers, and what it answers with theirs merged in).
 */
interface TrackedPolicy {
    PolicyRef ref();

    long generation();

    String resourceVersion();

    long writtenUnixNanos();

    /** The snapshots computed from the newest write are published. */
    boolean calculated();

    /** The nodes whose snapshot holds the policy (this replica's calculation). */
    Set<String> nodes();

    /** Whether the node does not run the newest generation, as far as this replica's agents said. */
    boolean lagging(String node);

    /** Since when the node has had to catch up (0: not one of the nodes). */
    long sinceUnixNanos(String node);

    /** When a node last came to run the newest generation (0: none yet). */
    long lastEnforcedUnixNanos();

    /** The receipt from this replica's knowledge alone. */
    Receipt receipt(int maxNodes);
}
