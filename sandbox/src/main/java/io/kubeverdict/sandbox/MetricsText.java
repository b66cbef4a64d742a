// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

/** Reading samples out of a Prometheus text exposition (a process's /metrics). */
public final class MetricsText {
    private MetricsText() {}

    /** The sum of a metric's samples (every label set), NaN when there is none. */
    public static double sum(String text, String name) {
        return sum(text, name, null);
    }

    /**
     * The sum of a metric's samples whose labels contain {@code label} (e.g. {@code outcome="allowed"}),
     * NaN when there is none.
     */
    public static double sum(String text, String name, String label) {
        double sum = Double.NaN;
        for (String line : text.split("\n")) {
            if (!line.startsWith(name) || line.length() == name.length()) {
                continue;
            }
            char next = line.charAt(name.length());
            int labelsEnd = line.lastIndexOf('}');
            boolean labelled = next == '{' && labelsEnd > 0;
            if ((next != ' ' && !labelled)
                    || (label != null
                            && (!labelled || !line.substring(0, labelsEnd).contains(label)))) {
                continue;
            }
            double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            sum = Double.isNaN(sum) ? v : sum + v;
        }
        return sum;
    }
}
