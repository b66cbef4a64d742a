// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The table of a run: per configuration the median over rounds of each figure, and the ratios
 * against the baseline taken per round (same round, same machine state) before the median.
 */
final class Report {
    private Report() {}

    static String render(List<Map<Config, Measurement>> rounds, int parallelThreads, int parallel8Threads) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(
                "%-42s | %10s | %8s | %8s | %11s | %9s | %11s | %9s | %9s | %10s | %12s | %7s | %12s%n",
                "config (median of " + rounds.size() + " rounds)",
                "seq conn/s",
                "seq p50",
                "seq p99",
                "par" + parallelThreads + " conn/s",
                "par" + parallelThreads + " p50",
                "par" + parallel8Threads + " conn/s",
                "seq ratio",
                "par ratio",
                "par8 ratio",
                "added p50 seq",
                "queued",
                "seq CPU/conn"));
        s.append("-".repeat(189)).append('\n');
        Map<Config, Double> added = new EnumMap<>(Config.class);
        for (Config c : Config.values()) {
            if (!rounds.get(0).containsKey(c)) {
                continue;
            }
            double addedP50 = median(
                    rounds,
                    r -> r.get(c).sequential().p50Micros()
                            - r.get(Config.BASELINE).sequential().p50Micros());
            added.put(c, addedP50);
            s.append(String.format(
                    "%-42s | %10.0f | %6.0fus | %6.0fus | %11.0f | %7.0fus | %11.0f | %8.3fx | %8.3fx | %9.3fx | %+10.1fus | %7.2f | %10.1fus%n",
                    c.label,
                    median(rounds, r -> r.get(c).sequential().connPerSecond()),
                    median(rounds, r -> r.get(c).sequential().p50Micros()),
                    median(rounds, r -> r.get(c).sequential().p99Micros()),
                    median(rounds, r -> r.get(c).parallel().connPerSecond()),
                    median(rounds, r -> r.get(c).parallel().p50Micros()),
                    median(rounds, r -> r.get(c).parallel8().connPerSecond()),
                    median(
                            rounds,
                            r -> r.get(c).sequential().connPerSecond()
                                    / r.get(Config.BASELINE).sequential().connPerSecond()),
                    median(
                            rounds,
                            r -> r.get(c).parallel().connPerSecond()
                                    / r.get(Config.BASELINE).parallel().connPerSecond()),
                    median(
                            rounds,
                            r -> r.get(c).parallel8().connPerSecond()
                                    / r.get(Config.BASELINE).parallel8().connPerSecond()),
                    addedP50,
                    median(rounds, r -> r.get(c).queuedPerConnection()),
                    median(rounds, r -> r.get(c).sequential().cpuMicrosPerConnection())));
        }
        if (added.containsKey(Config.SELECTED)
                && added.containsKey(Config.C_NFQUEUE)
                && rounds.get(0).containsKey(Config.CONNTRACK)) {
            // above the conntrack-on baseline (a'): what the queue path adds, not conntrack
            ToDoubleFunction<Map<Config, Measurement>> kvSeq =
                    r -> r.get(Config.SELECTED).sequential().p50Micros()
                            - r.get(Config.CONNTRACK).sequential().p50Micros();
            ToDoubleFunction<Map<Config, Measurement>> cSeq =
                    r -> r.get(Config.C_NFQUEUE).sequential().p50Micros()
                            - r.get(Config.CONNTRACK).sequential().p50Micros();
            ToDoubleFunction<Map<Config, Measurement>> kvPar =
                    r -> r.get(Config.SELECTED).parallel().p50Micros()
                            - r.get(Config.CONNTRACK).parallel().p50Micros();
            ToDoubleFunction<Map<Config, Measurement>> cPar =
                    r -> r.get(Config.C_NFQUEUE).parallel().p50Micros()
                            - r.get(Config.CONNTRACK).parallel().p50Micros();
            s.append(String.format(
                    "added p50 latency above (a') conntrack on, kube-verdict (c) vs minimal C consumer (d): sequential %.1fus vs %.1fus "
                            + "(%.2fx of the medians), par%d %.1fus vs %.1fus (%.2fx)%n",
                    median(rounds, kvSeq),
                    median(rounds, cSeq),
                    median(rounds, kvSeq) / median(rounds, cSeq),
                    parallelThreads,
                    median(rounds, kvPar),
                    median(rounds, cPar),
                    median(rounds, kvPar) / median(rounds, cPar)));
            // paired by round: both ran minutes apart at most, so drifts of the shared machine cancel
            s.append(String.format(
                    "p50 latency, kube-verdict (c) minus minimal C consumer (d), per round then median [min..max]: seq %s, par%d %s%n",
                    spreadMicros(
                            rounds,
                            r -> r.get(Config.SELECTED).sequential().p50Micros()
                                    - r.get(Config.C_NFQUEUE).sequential().p50Micros()),
                    parallelThreads,
                    spreadMicros(
                            rounds,
                            r -> r.get(Config.SELECTED).parallel().p50Micros()
                                    - r.get(Config.C_NFQUEUE).parallel().p50Micros())));
            s.append(String.format(
                    "connection rate, kube-verdict (c) / minimal C consumer (d), per round then median [min..max]: "
                            + "seq %s, par%d %s, par%d %s%n",
                    spread(
                            rounds,
                            r -> r.get(Config.SELECTED).sequential().connPerSecond()
                                    / r.get(Config.C_NFQUEUE).sequential().connPerSecond()),
                    parallelThreads,
                    spread(
                            rounds,
                            r -> r.get(Config.SELECTED).parallel().connPerSecond()
                                    / r.get(Config.C_NFQUEUE).parallel().connPerSecond()),
                    parallel8Threads,
                    spread(
                            rounds,
                            r -> r.get(Config.SELECTED).parallel8().connPerSecond()
                                    / r.get(Config.C_NFQUEUE).parallel8().connPerSecond())));
        }
        ConsumerCpuLines.append(s, rounds);
        // unselected pods, guard on: what a node with kube-verdict costs the traffic no policy selects
        rateVersus(
                s,
                rounds,
                Config.UNSELECTED,
                Config.CONNTRACK,
                "(b) agent, pods not selected, guard on vs (a') conntrack on (goal >= 0.98x)",
                parallelThreads,
                parallel8Threads);
        // the same table and bed, only the guard's sets filled or empty: the guard's own cost
        rateVersus(
                s,
                rounds,
                Config.TABLE_UNSELECTED,
                Config.TABLE_UNGUARDED,
                "pod address guard's sets alone, (b') vs (b'')",
                parallelThreads,
                parallel8Threads);
        // selected pods: with the verdict cache (bench --verdict-cache on) the repeated key stays in the kernel
        rateVersus(
                s,
                rounds,
                Config.SELECTED,
                Config.CONNTRACK,
                "(c) agent, policy selects+allows vs (a') conntrack on",
                parallelThreads,
                parallel8Threads);
        s.append(
                "ratio = conn/s of the config / conn/s of (a) in the same round; added = p50 minus (a)'s p50 in the same round;\n"
                        + "queued = packets that went through NFQUEUE per connection (from /proc/net/netfilter/nfnetlink_queue);\n"
                        + "CPU/conn = CPU time of the client and echo server threads per connection, with the kernel's work in their\n"
                        + "context (the forward hook's rules); a CPU ratio below 1 is less CPU (rates: above 1 is faster)\n");
        return s.toString();
    }

    /** One line: {@code config}'s connection rate over {@code base}'s per round, and the paired seq p50 difference. */
    private static void rateVersus(
            StringBuilder s,
            List<Map<Config, Measurement>> rounds,
            Config config,
            Config base,
            String title,
            int parallelThreads,
            int parallel8Threads) {
        if (!rounds.get(0).containsKey(config) || !rounds.get(0).containsKey(base)) {
            return;
        }
        s.append(String.format(
                "%s, per round then median [min..max]: seq %s, par%d %s, par%d %s conn/s, seq p50 %s; "
                        + "CPU per connection seq %s, par%d %s%n",
                title,
                spread(
                        rounds,
                        r -> r.get(config).sequential().connPerSecond()
                                / r.get(base).sequential().connPerSecond()),
                parallelThreads,
                spread(
                        rounds,
                        r -> r.get(config).parallel().connPerSecond()
                                / r.get(base).parallel().connPerSecond()),
                parallel8Threads,
                spread(
                        rounds,
                        r -> r.get(config).parallel8().connPerSecond()
                                / r.get(base).parallel8().connPerSecond()),
                spreadMicros(
                        rounds,
                        r -> r.get(config).sequential().p50Micros()
                                - r.get(base).sequential().p50Micros()),
                spread(
                        rounds,
                        r -> r.get(config).sequential().cpuMicrosPerConnection()
                                / r.get(base).sequential().cpuMicrosPerConnection()),
                parallelThreads,
                spread(
                        rounds,
                        r -> r.get(config).parallel().cpuMicrosPerConnection()
                                / r.get(base).parallel().cpuMicrosPerConnection())));
    }

    /** "median [min..max]" of a per-round ratio. */
    static String spread(List<Map<Config, Measurement>> rounds, ToDoubleFunction<Map<Config, Measurement>> f) {
        return spread(rounds, f, "%.3fx [%.3f..%.3f]");
    }

    /** "median [min..max]" of a per-round difference in microseconds. */
    static String spreadMicros(List<Map<Config, Measurement>> rounds, ToDoubleFunction<Map<Config, Measurement>> f) {
        return spread(rounds, f, "%+.1fus [%+.1f..%+.1f]");
    }

    /** format applied to the median, the min and the max of f over the rounds. */
    private static String spread(
            List<Map<Config, Measurement>> rounds, ToDoubleFunction<Map<Config, Measurement>> f, String format) {
        double[] values = rounds.stream().mapToDouble(f).toArray();
        java.util.Arrays.sort(values);
        return String.format(format, Sample.median(values), values[0], values[values.length - 1]);
    }

    static double median(List<Map<Config, Measurement>> rounds, ToDoubleFunction<Map<Config, Measurement>> f) {
        return Sample.median(rounds.stream().mapToDouble(f).toArray());
    }
}
