// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The outcome of probing every ordered pair of pods on one port: outcomes.get(from).get(to). */
public record ObservedMatrix(ServePort target, List<String> pods, Map<String, Map<String, Outcome>> outcomes) {
    public ObservedMatrix {
        pods = List.copyOf(pods);
        Map<String, Map<String, Outcome>> copy = new LinkedHashMap<>();
        outcomes.forEach(
                (from, row) -> copy.put(from, java.util.Collections.unmodifiableMap(new LinkedHashMap<>(row))));
        outcomes = java.util.Collections.unmodifiableMap(copy);
    }

    public Outcome outcome(String from, String to) {
        return outcomes.get(from).get(to);
    }

    public boolean connected(String from, String to) {
        return outcome(from, to).connected();
    }

    /** from -> to -> connected, in pod order. */
    public Map<String, Map<String, Boolean>> asBooleans() {
        Map<String, Map<String, Boolean>> result = new LinkedHashMap<>();
        for (String from : pods) {
            Map<String, Boolean> row = new LinkedHashMap<>();
            for (String to : pods) {
                row.put(to, connected(from, to));
            }
            result.put(from, row);
        }
        return result;
    }
}
