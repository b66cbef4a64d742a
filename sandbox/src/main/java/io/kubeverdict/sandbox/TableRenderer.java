// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import java.util.List;

/**
 * The human form of a probe: expected and observed matrices side by side (rows: from, columns:
 * to; "." may connect / connected, "X" may not / did not; a "!" marks a mismatch), then every
 * mismatch named with what the probe saw. The diagonal (loopback) is not compared.
 */
public final class TableRenderer {
    private TableRenderer() {}

    public static String render(ProbeResult result) {
        ConnectivityMatrix expected = result.expected();
        List<String> pods = expected.pods();
        StringBuilder out = new StringBuilder();
        out.append(expected.port()).append('/').append(result.protocol()).append(": ");
        if (result.unsupported()) {
            return out.append("not probed, this kernel has no ")
                    .append(result.protocol())
                    .append(" sockets\n")
                    .toString();
        }
        int pairs = pods.size() * (pods.size() - 1);
        out.append(
                result.agrees()
                        ? "observed == expected (" + pairs + " pairs)\n"
                        : result.mismatches().size() + " of " + pairs + " pairs differ\n");
        int width = pods.stream().mapToInt(String::length).max().orElse(3) + 1;
        int first = Math.max(width, "observed".length() + 1);
        String gap = "    ";
        StringBuilder header = new StringBuilder();
        header.append(pad("expected", first));
        pods.forEach(p -> header.append(pad(p, width)));
        header.append(gap).append(pad("observed", first));
        pods.forEach(p -> header.append(pad(p, width)));
        out.append(header.toString().stripTrailing()).append('\n');
        for (String from : pods) {
            StringBuilder line = new StringBuilder(pad(from, first));
            for (String to : pods) {
                line.append(pad(expected.allowed(from, to) ? "." : "X", width));
            }
            line.append(gap).append(pad(from, first));
            for (String to : pods) {
                boolean connected = result.observed().connected(from, to);
                boolean mismatch = !from.equals(to) && connected != expected.allowed(from, to);
                line.append(pad((connected ? "." : "X") + (mismatch ? "!" : ""), width));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        out.append("  (pod to itself is loopback inside the pod, never seen by a node: shown, not compared)\n");
        for (List<String> m : result.mismatches()) {
            String from = m.get(0);
            String to = m.get(1);
            out.append("  MISMATCH ")
                    .append(from)
                    .append(" -> ")
                    .append(to)
                    .append(": expected ")
                    .append(expected.allowed(from, to) ? "allowed" : "denied")
                    .append(", observed ")
                    .append(result.observed().outcome(from, to))
                    .append('\n');
        }
        return out.toString();
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s + " " : s + " ".repeat(width - s.length());
    }
}
