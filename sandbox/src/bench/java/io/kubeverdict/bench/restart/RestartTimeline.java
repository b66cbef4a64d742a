// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench.restart;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One round's points, in ms after the control plane's spawn, read from the processes' logs (the
 * first matching line at or after the spawn; their timestamps are wall time to the millisecond)
 * and from the probe (the first refused connection). A point not found is -1.
 */
record RestartTimeline(Map<String, Long> points) {
    static final String JVM = "cp first log line";
    static final String LISTENING = "cp gRPC listening";
    static final String PUBLISHED = "cp first publication";
    static final String CONNECTED = "agent stream accepted";
    static final String IN_SYNC = "agent in sync (received)";
    static final String ENFORCED = "probe refused (enforced)";
    /** The agent whose node did not change: it resumes (one InSync) instead of a full snapshot. */
    static final String OTHER_RESUMED = "node-2 resumed";

    static final List<String> POINTS = List.of(JVM, LISTENING, PUBLISHED, CONNECTED, IN_SYNC, ENFORCED, OTHER_RESUMED);

    static RestartTimeline read(
            long spawned, long refused, Path controlPlaneLog, Path agentLog, String node, Path otherAgentLog)
            throws IOException {
        List<String> cp = Files.readAllLines(controlPlaneLog);
        List<String> agent = Files.readAllLines(agentLog);
        List<String> other = Files.readAllLines(otherAgentLog);
        Map<String, Long> p = new LinkedHashMap<>();
        p.put(JVM, first(cp, spawned, line -> true));
        p.put(LISTENING, first(cp, spawned, line -> line.contains("gRPC listening on")));
        p.put(PUBLISHED, first(cp, spawned, line -> line.contains("first full calculation published")));
        p.put(CONNECTED, first(cp, spawned, line -> line.contains("agent for node " + node + " connected")));
        p.put(IN_SYNC, first(agent, spawned, line -> line.contains("in sync at sequence")));
        p.put(ENFORCED, refused - spawned);
        p.put(
                OTHER_RESUMED,
                first(other, spawned, line -> line.contains("in sync at sequence") && line.contains("resumed")));
        return new RestartTimeline(p);
    }

    private static long first(List<String> lines, long spawned, Predicate<String> match) {
        for (String line : lines) {
            long at = timestamp(line);
            if (at >= spawned && match.test(line)) {
                return at - spawned;
            }
        }
        return -1;
    }

    /** The wall time of a log line (its first field), or -1 for a line without one (a stack trace). */
    private static long timestamp(String line) {
        int space = line.indexOf(' ');
        if (space < 20) {
            return -1;
        }
        try {
            return OffsetDateTime.parse(line.substring(0, space)).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            return -1;
        }
    }

    String describe() {
        StringBuilder s = new StringBuilder();
        points.forEach((name, ms) ->
                s.append(s.isEmpty() ? "" : ", ").append(name).append(' ').append(ms));
        return s + " ms";
    }

    /** Median, p90 (nearest rank) and max of one point over the rounds that have it. */
    static String stats(String point, List<RestartTimeline> rounds) {
        List<Long> values = rounds.stream()
                .map(t -> t.points().get(point))
                .filter(Objects::nonNull)
                .filter(v -> v >= 0)
                .sorted()
                .toList();
        if (values.isEmpty()) {
            return String.format(Locale.ROOT, "%-26s not seen", point);
        }
        return String.format(
                Locale.ROOT,
                "%-26s %6d / %6d / %6d ms",
                point,
                rank(values, 0.5),
                rank(values, 0.9),
                values.get(values.size() - 1));
    }

    private static long rank(List<Long> sorted, double q) {
        int index = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }
}
