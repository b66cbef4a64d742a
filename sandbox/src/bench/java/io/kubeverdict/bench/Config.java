// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

/** The four configurations of one round, in the order of the report. */
enum Config {
    BASELINE("(a) no agent"),
    /**
     * Conntrack switched on in the node (a table of one `ct state` rule, not ours), as on any node
     * with kube-proxy: the agent's `ct state new` rules switch it on in (b'), (b), (c), (d), not in (a).
     */
    CONNTRACK("(a') conntrack on, no agent table"),
    /** (b) without the agent process, in the plain testbed: tells the table's cost from the rest of (b)'s. */
    TABLE_UNSELECTED("(b') agent's table only, not selected"),
    UNSELECTED("(b) agent, pods not selected"),
    SELECTED("(c) agent, policy selects+allows"),
    C_NFQUEUE("(d) minimal C NFQUEUE, accept all");

    final String label;

    Config(String label) {
        this.label = label;
    }
}
