// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

/**
 * What the ruleset looks like apart from its addresses: our table's name, the queue number(s),
 * fail-open vs fail-closed, the path packets take to the queue and the table layout.
 *
 * @param queueNumber the first queue
 * @param queues how many queues from {@code queueNumber} on the kernel spreads flows over (1: one)
 * @param failOpen true: the queue rule carries bypass, so packets pass when no program listens
 *     on the queue (agent down); false: they are dropped until the agent answers
 * @param cutAction what happens to packets of connections the agent cut ({@link FlowMarks#CUT})
 * @param cache the verdict cache's sets and rules, or none ({@link CacheSettings#OFF})
 */
public record RulesetConfig(
        String table,
        int queueNumber,
        boolean failOpen,
        QueuePath path,
        TableLayout layout,
        CutAction cutAction,
        int queues,
        CacheSettings cache) {
    public static final String DEFAULT_TABLE = "kube_verdict";

    /** One inet table; cut connections are dropped. */
    public RulesetConfig(String table, int queueNumber, boolean failOpen, QueuePath path) {
        this(table, queueNumber, failOpen, path, TableLayout.INET);
    }

    /** Cut connections are dropped. */
    public RulesetConfig(String table, int queueNumber, boolean failOpen, QueuePath path, TableLayout layout) {
        this(table, queueNumber, failOpen, path, layout, CutAction.DROP);
    }

    /** One queue. */
    public RulesetConfig(
            String table, int queueNumber, boolean failOpen, QueuePath path, TableLayout layout, CutAction cutAction) {
        this(table, queueNumber, failOpen, path, layout, cutAction, 1);
    }

    /** No verdict cache. */
    public RulesetConfig(
            String table,
            int queueNumber,
            boolean failOpen,
            QueuePath path,
            TableLayout layout,
            CutAction cutAction,
            int queues) {
        this(table, queueNumber, failOpen, path, layout, cutAction, queues, CacheSettings.OFF);
    }

    public RulesetConfig {
        if (table == null || !table.matches("[A-Za-z][A-Za-z0-9_]{0,30}")) {
            throw new IllegalArgumentException("bad table name: " + table);
        }
        if (queueNumber < 0 || queueNumber > 65535) {
            throw new IllegalArgumentException("queue number must be 0..65535, got " + queueNumber);
        }
        if (queues < 1 || queueNumber + queues - 1 > 65535) {
            throw new IllegalArgumentException("queues " + queueNumber + ".." + (queueNumber + queues - 1)
                    + " must lie in 0..65535 (at least one)");
        }
        if (path == null) {
            throw new IllegalArgumentException("queue path must be resolved (see QueuePathProbe)");
        }
        if (layout == null) {
            throw new IllegalArgumentException("table layout is required");
        }
        if (cutAction == null) {
            throw new IllegalArgumentException("cut action is required");
        }
        if (cache == null) {
            throw new IllegalArgumentException("cache settings are required (CacheSettings.OFF for none)");
        }
    }

    public RulesetConfig withPath(QueuePath newPath) {
        return new RulesetConfig(table, queueNumber, failOpen, newPath, layout, cutAction, queues, cache);
    }

    public RulesetConfig withLayout(TableLayout newLayout) {
        return new RulesetConfig(table, queueNumber, failOpen, path, newLayout, cutAction, queues, cache);
    }

    /** The last queue of the range. */
    public int lastQueue() {
        return queueNumber + queues - 1;
    }
}
