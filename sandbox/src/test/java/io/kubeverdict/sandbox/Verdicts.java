// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which ordered pairs of different pods may open a new connection in one situation (all agents
 * enforcing one manifest copy, or one node's agent killed or cut off), named for reports.
 */
record Verdicts(String name, List<String> pods, Set<String> allowed) {
    Verdicts {
        pods = List.copyOf(pods);
        allowed = Set.copyOf(new TreeSet<>(allowed));
    }

    static String pair(String from, String to) {
        return from + " -> " + to;
    }

    boolean allowed(String from, String to) {
        return allowed.contains(pair(from, to));
    }

    /** The ordered pairs of different pods on which this and other differ. */
    List<String> differences(Verdicts other) {
        List<String> out = new ArrayList<>();
        for (String from : pods) {
            for (String to : pods) {
                if (!from.equals(to) && allowed(from, to) != other.allowed(from, to)) {
                    out.add(pair(from, to));
                }
            }
        }
        return out;
    }

    /** How many ordered pairs of different pods are denied. */
    int deniedCount() {
        return pods.size() * (pods.size() - 1) - allowed.size();
    }

    @Override
    public String toString() {
        return name;
    }
}
