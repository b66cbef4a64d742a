package io.kubeverdict.agent.nft;

/**
 * What the ruleset looks like apart from its addresses: our table's name, the queue number,
 * fail-open vs fail-closed and the path packets take to the queue.
 *
 * @param failOpen true: the queue rule carries bypass, so packets pass when no program listens
 *     on the queue (agent down); false: they are dropped until the agent answers
 */
public record RulesetConfig(String table, int queueNumber, boolean failOpen, QueuePath path) {
    public static final String DEFAULT_TABLE = "kube_verdict";

    public RulesetConfig {
        if (table == null || !table.matches("[A-Za-z][A-Za-z0-9_]{0,30}")) {
            throw new IllegalArgumentException("bad table name: " + table);
        }
        if (queueNumber < 0 || queueNumber > 65535) {
            throw new IllegalArgumentException("queue number must be 0..65535, got " + queueNumber);
        }
        if (path == null) {
            throw new IllegalArgumentException("queue path must be resolved (see QueuePathProbe)");
        }
    }

    public RulesetConfig withPath(QueuePath newPath) {
        return new RulesetConfig(table, queueNumber, failOpen, newPath);
    }
}
