// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.Testbed;
import java.io.IOException;

/**
 * Cuts one node off the control plane: a table of the test's own in the node's namespace drops
 * every packet between the node and the control plane's sync port, both ways, established
 * connections included (no reset, no ICMP: the agent's stream just goes silent, as in a real
 * partition). The agent's own table, the pods' traffic and the inspection port are untouched.
 * Healing deletes the table; so does removing the namespace.
 */
final class Partition implements AutoCloseable {
    static final String TABLE = "kv_fault_partition";

    private final Testbed testbed;
    private final String namespace;
    private boolean active;

    private Partition(Testbed testbed, String namespace) {
        this.testbed = testbed;
        this.namespace = namespace;
    }

    /** Cuts node off the control plane at controlPlaneIp:port. */
    static Partition cut(Testbed testbed, String node, String controlPlaneIp, int port) throws IOException {
        Partition p = new Partition(testbed, testbed.layout().nodeNamespace(node));
        testbed.exec(
                p.namespace,
                "nft",
                "add table inet " + TABLE
                        + "; add chain inet " + TABLE + " out { type filter hook output priority -10; policy accept; }"
                        + "; add chain inet " + TABLE + " in { type filter hook input priority -10; policy accept; }"
                        + "; add rule inet " + TABLE + " out ip daddr " + controlPlaneIp + " tcp dport " + port
                        + " drop"
                        + "; add rule inet " + TABLE + " in ip saddr " + controlPlaneIp + " tcp sport " + port
                        + " drop");
        p.active = true;
        return p;
    }

    /** The rules as nft lists them, to show the partition is in place. */
    String ruleset() throws IOException {
        return testbed.exec(namespace, "nft", "list", "table", "inet", TABLE);
    }

    /** Ends the partition. */
    void heal() throws IOException {
        if (active) {
            testbed.exec(namespace, "nft", "delete", "table", "inet", TABLE);
            active = false;
        }
    }

    @Override
    public void close() throws IOException {
        heal();
    }
}
