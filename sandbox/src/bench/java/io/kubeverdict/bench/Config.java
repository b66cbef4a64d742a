// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

/** The configurations of one round, in the order of the report. */
enum Config {
    BASELINE("(a) no agent"),
    /**
     * Conntrack switched on in the node (a table of one `ct state` rule, not ours), as on any node
     * with kube-proxy: the agent's `ct state new` rules switch it on in (b''), (b'), (b), (c), (d), not in
     * (a).
     */
    CONNTRACK("(a') conntrack on, no agent table"),
    /**
     * (b') with empty pod address guard sets (as the agent's table is on a node without pod ranges):
     * (b') against it is what the guard's sets cost traffic of known, unselected pods.
     */
    TABLE_UNGUARDED("(b'') agent's tables only, guard sets empty"),
    /**
     * (b) without the agent process, in the plain testbed: its two tables (policy, with the guard's
     * sets as the agent fills them, and DNS, no pod watched): tells the tables' cost from the rest of
     * (b)'s.
     */
    TABLE_UNSELECTED("(b') agent's tables only, not selected"),
    /** The agent with the node's pod range (guard on), the pods known and not selected: never queued. */
    UNSELECTED("(b) agent, pods not selected, guard on"),
    SELECTED("(c) agent, policy selects+allows"),
    C_NFQUEUE("(d) minimal C NFQUEUE, accept all");

    final String label;

    Config(String label) {
        this.label = label;
    }

    /** Whether this configuration's connections go through NFQUEUE (the others must queue nothing). */
    boolean queues() {
        return this == SELECTED || this == C_NFQUEUE;
    }
}
