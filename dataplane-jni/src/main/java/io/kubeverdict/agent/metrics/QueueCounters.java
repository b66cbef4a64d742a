package io.kubeverdict.agent.metrics;

/**
 * The kernel's counters for our NFQUEUE (one line of /proc/net/netfilter/nfnetlink_queue):
 * packets queued, dropped because the queue was full, and dropped because delivery to us failed.
 */
public record QueueCounters(boolean bound, long total, long dropped, long userDropped) {
    public static final QueueCounters UNBOUND = new QueueCounters(false, 0, 0, 0);
}
