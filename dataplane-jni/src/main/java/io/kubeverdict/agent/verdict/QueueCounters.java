// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One line of /proc/net/netfilter/nfnetlink_queue: the kernel's own counters of a queue.
 *
 * @param queue the queue number
 * @param portId the netlink port of the listener (0: nobody listens)
 * @param waiting packets queued now, waiting for a verdict
 * @param copyMode 0 none, 1 meta, 2 packet
 * @param copyRange bytes copied per packet
 * @param dropped packets dropped because the queue was full
 * @param userDropped packets the kernel could not send to the listener (its socket was full)
 * @param idSequence the last packet id handed out
 */
public record QueueCounters(
        int queue,
        long portId,
        long waiting,
        int copyMode,
        long copyRange,
        long dropped,
        long userDropped,
        long idSequence) {

    /** The file as seen from the calling thread's network namespace. */
    public static final Path PROC_FILE = Path.of("/proc/thread-self/net/netfilter/nfnetlink_queue");

    /** Parses the file's text; lines that do not have the expected numbers are skipped. */
    public static List<QueueCounters> parse(String text) {
        List<QueueCounters> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 8) {
                continue;
            }
            try {
                out.add(new QueueCounters(
                        Integer.parseInt(f[0]),
                        Long.parseLong(f[1]),
                        Long.parseLong(f[2]),
                        Integer.parseInt(f[3]),
                        Long.parseLong(f[4]),
                        Long.parseLong(f[5]),
                        Long.parseLong(f[6]),
                        Long.parseLong(f[7])));
            } catch (NumberFormatException e) {
                // not a counter line
            }
        }
        return out;
    }

    /** The counters of one queue from a file like {@link #PROC_FILE}; empty when it is not bound. */
    public static Optional<QueueCounters> read(Path file, int queue) throws IOException {
        if (!Files.exists(file)) {
            return Optional.empty(); // nfnetlink_queue not loaded yet
        }
        return parse(Files.readString(file)).stream()
                .filter(c -> c.queue == queue)
                .findFirst();
    }

    /** The counters of the given queues that are bound, in the order given; one read of the file. */
    public static List<QueueCounters> read(Path file, int[] queues) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        List<QueueCounters> all = parse(Files.readString(file));
        List<QueueCounters> out = new ArrayList<>();
        for (int queue : queues) {
            for (QueueCounters c : all) {
                if (c.queue == queue) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    /**
     * Several queues' counters added up, as one queue (the first's number, port and copy settings);
     * empty when there are none.
     */
    public static Optional<QueueCounters> total(List<QueueCounters> queues) {
        if (queues.isEmpty()) {
            return Optional.empty();
        }
        QueueCounters first = queues.get(0);
        long waiting = 0, dropped = 0, userDropped = 0, ids = 0;
        for (QueueCounters c : queues) {
            waiting += c.waiting;
            dropped += c.dropped;
            userDropped += c.userDropped;
            ids += c.idSequence;
        }
        return Optional.of(new QueueCounters(
                first.queue, first.portId, waiting, first.copyMode, first.copyRange, dropped, userDropped, ids));
    }
}
