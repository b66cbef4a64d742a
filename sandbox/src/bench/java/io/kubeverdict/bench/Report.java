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

    static String render(List<Map<Config, Measurement>> rounds, int parallelThreads) {
        StringBuilder s = new StringBuilder();
        s.append(String.format("%-38s | %10s | %8s | %8s | %11s | %9s | %9s | %9s | %12s | %7s%n",
                "config (median of " + rounds.size() + " rounds)", "seq conn/s", "seq p50", "seq p99",
                "par" + parallelThreads + " conn/s", "par" + parallelThreads + " p50", "seq ratio", "par ratio",
                "added p50 seq", "queued"));
        s.append("-".repeat(142)).append('\n');
        Map<Config, Double> added = new EnumMap<>(Config.class);
        for (Config c : Config.values()) {
            if (!rounds.get(0).containsKey(c)) {
                continue;
            }
            double addedP50 = median(rounds, r -> r.get(c).sequential().p50Micros() - r.get(Config.BASELINE).sequential().p50Micros());
            added.put(c, addedP50);
            s.append(String.format("%-38s | %10.0f | %6.0fus | %6.0fus | %11.0f | %7.0fus | %8.3fx | %8.3fx | %+10.1fus | %7.2f%n",
                    c.label,
                    median(rounds, r -> r.get(c).sequential().connPerSecond()),
                    median(rounds, r -> r.get(c).sequential().p50Micros()),
                    median(rounds, r -> r.get(c).sequential().p99Micros()),
                    median(rounds, r -> r.get(c).parallel().connPerSecond()),
                    median(rounds, r -> r.get(c).parallel().p50Micros()),
                    median(rounds, r -> r.get(c).sequential().connPerSecond() / r.get(Config.BASELINE).sequential().connPerSecond()),
                    median(rounds, r -> r.get(c).parallel().connPerSecond() / r.get(Config.BASELINE).parallel().connPerSecond()),
                    addedP50,
                    median(rounds, r -> r.get(c).queuedPerConnection())));
        }
        if (added.containsKey(Config.SELECTED) && added.containsKey(Config.C_NFQUEUE)) {
            double addedParC = median(rounds, r -> r.get(Config.C_NFQUEUE).parallel().p50Micros() - r.get(Config.BASELINE).parallel().p50Micros());
            double addedParKv = median(rounds, r -> r.get(Config.SELECTED).parallel().p50Micros() - r.get(Config.BASELINE).parallel().p50Micros());
            s.append(String.format("added p50 latency, kube-verdict (c) vs minimal C consumer (d): sequential %.1fus vs %.1fus (%.2fx), "
                    + "par%d %.1fus vs %.1fus (%.2fx)%n", added.get(Config.SELECTED), added.get(Config.C_NFQUEUE),
                    added.get(Config.SELECTED) / added.get(Config.C_NFQUEUE), parallelThreads, addedParKv, addedParC, addedParKv / addedParC));
        }
        if (rounds.get(0).containsKey(Config.CONNTRACK) && rounds.get(0).containsKey(Config.UNSELECTED)) {
            s.append(String.format("(b) agent, pods not selected vs (a') conntrack on: seq %.3fx, par%d %.3fx conn/s, seq p50 %+.1fus%n",
                    median(rounds, r -> r.get(Config.UNSELECTED).sequential().connPerSecond() / r.get(Config.CONNTRACK).sequential().connPerSecond()),
                    parallelThreads,
                    median(rounds, r -> r.get(Config.UNSELECTED).parallel().connPerSecond() / r.get(Config.CONNTRACK).parallel().connPerSecond()),
                    median(rounds, r -> r.get(Config.UNSELECTED).sequential().p50Micros() - r.get(Config.CONNTRACK).sequential().p50Micros())));
        }
        s.append("ratio = conn/s of the config / conn/s of (a) in the same round; added = p50 minus (a)'s p50 in the same round;\n"
                + "queued = packets that went through NFQUEUE per connection (from /proc/net/netfilter/nfnetlink_queue)\n");
        return s.toString();
    }

    static double median(List<Map<Config, Measurement>> rounds, ToDoubleFunction<Map<Config, Measurement>> f) {
        return Sample.median(rounds.stream().mapToDouble(f).toArray());
    }
}
