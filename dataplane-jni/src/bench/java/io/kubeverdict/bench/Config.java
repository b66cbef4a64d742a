package io.kubeverdict.bench;

/** The four configurations of one round, in the order of the report. */
enum Config {
    BASELINE("(a) no agent"),
    UNSELECTED("(b) agent, pods not selected"),
    SELECTED("(c) agent, policy selects+allows"),
    C_NFQUEUE("(d) minimal C NFQUEUE, accept all");

    final String label;

    Config(String label) {
        this.label = label;
    }
}
