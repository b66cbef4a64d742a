// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The report's lines on the queue consumer's own CPU: on two shared cores every microsecond the
 * agent's process spends beside the verdict is taken from the client and the server, so (c)'s
 * rate against (d)'s follows this figure, which is far less noisy than the rates.
 */
final class ConsumerCpuLines {
    /** Threads below this (µs per connection, median) are left out of the breakdown. */
    private static final double SHOWN_MICROS = 0.5;

    private ConsumerCpuLines() {}

    static void append(StringBuilder s, List<Map<Config, Measurement>> rounds) {
        s.append(String.format(
                "queue consumer's CPU per connection (the whole process, over seq, par4 and par8), per round then median [min..max]: "
                        + "(c) agent %s, (d) C consumer %s, (c)/(d) %s; the agent beside unselected pods (b) %s%n",
                Report.spreadMicros(rounds, r -> r.get(Config.SELECTED).consumerMicrosPerConnection()),
                Report.spreadMicros(rounds, r -> r.get(Config.C_NFQUEUE).consumerMicrosPerConnection()),
                Report.spread(
                        rounds,
                        r -> r.get(Config.SELECTED).consumerMicrosPerConnection()
                                / r.get(Config.C_NFQUEUE).consumerMicrosPerConnection()),
                Report.spreadMicros(rounds, r -> r.get(Config.UNSELECTED).consumerMicrosPerConnection())));
        s.append(String.format(
                "  the sandbox's control plane meanwhile (beside the node here, not on it in a cluster), us per connection: "
                        + "(b) %s, (c) %s, (d) %s%n",
                Report.spreadMicros(rounds, r -> r.get(Config.UNSELECTED).controlPlaneMicrosPerConnection()),
                Report.spreadMicros(rounds, r -> r.get(Config.SELECTED).controlPlaneMicrosPerConnection()),
                Report.spreadMicros(rounds, r -> r.get(Config.C_NFQUEUE).controlPlaneMicrosPerConnection())));
        s.append("  (c) agent's threads, us per connection (median): ")
                .append(threads(rounds, Config.SELECTED))
                .append('\n');
        s.append("  (d) C consumer's threads: ")
                .append(threads(rounds, Config.C_NFQUEUE))
                .append('\n');
    }

    /** The config's thread names, most CPU first, with their median µs per connection. */
    private static String threads(List<Map<Config, Measurement>> rounds, Config config) {
        TreeSet<String> names = rounds.stream()
                .flatMap(r -> r.get(config).consumerCpuNanos().keySet().stream())
                .collect(Collectors.toCollection(TreeSet::new));
        record ThreadCpu(String name, double micros) {}
        List<ThreadCpu> shown = names.stream()
                .map(n -> new ThreadCpu(
                        n, Report.median(rounds, r -> r.get(config).threadMicrosPerConnection(n))))
                .filter(t -> t.micros() >= SHOWN_MICROS)
                .sorted(Comparator.comparingDouble(ThreadCpu::micros).reversed())
                .toList();
        return shown.isEmpty()
                ? "none above " + SHOWN_MICROS + " us"
                : shown.stream()
                        .map(t -> String.format("%s %.1f", t.name(), t.micros()))
                        .collect(Collectors.joining(", "));
    }
}
