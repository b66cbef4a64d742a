// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import java.util.List;

/**
 * Where one policy, at the newest generation the control plane has seen, is enforced: on
 * {@code enforcedNodes} of the {@code nodes} whose snapshot holds it. Times are unix nanos on the
 * control plane's clock (0: none).
 *
 * @param generation metadata.generation of the newest write seen (0 when the object has none,
 *     as in a manifest directory)
 * @param resourceVersion of that write ("" when none)
 * @param writtenUnixNanos when the control plane saw that write (the receipt's "write" time)
 * @param calculated whether the snapshots computed from that write are published; before that
 *     nothing is enforced, even on zero nodes
 * @param enforcedSinceUnixNanos when it last became enforced on every node, 0 while it is not
 * @param latencyNanos write seen → enforced on the last node, for this generation; -1 until then
 * @param nodeReceipts lagging nodes first (longest lagging first), then enforced ones by name;
 *     possibly cut short (see {@link PolicyReceipts#receipt})
 * @param laggingNodes how many of the nodes do not run the generation yet
 */
public record Receipt(
        PolicyRef ref,
        long generation,
        String resourceVersion,
        long writtenUnixNanos,
        boolean calculated,
        int nodes,
        int enforcedNodes,
        long enforcedSinceUnixNanos,
        long latencyNanos,
        List<NodeReceipt> nodeReceipts,
        int laggingNodes) {

    /** Enforced on every node it applies to (vacuously on none), at the generation seen. */
    public boolean enforced() {
        return calculated && laggingNodes == 0;
    }

    /**
     * One node of a policy.
     *
     * @param requiredVersion the first snapshot version of the node that holds the policy's generation
     * @param appliedVersion the newest snapshot version the node's agent reported applied (0: none)
     * @param sinceUnixNanos lagging: since when the node has had to catch up (the write, or when the
     *     policy came to the node); enforced: the same, the start of the wait that ended
     */
    public record NodeReceipt(
            String node, boolean enforced, long requiredVersion, long appliedVersion, long sinceUnixNanos) {}
}
