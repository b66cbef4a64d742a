// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the pods may see, as a sequence of epochs that the test moves through: each epoch names
 * the situations ({@link Verdicts}) it accepts. A steady epoch accepts one; a convergence window
 * (from a change until every agent reports it applied) accepts the situation before and after,
 * pair by pair: a pair on which both agree must keep that verdict even inside the window.
 *
 * <p>An observation is judged by every epoch it overlapped, so a change made while a probe
 * round was in flight can never be mistaken for a wrong verdict, and nothing else is excused.
 */
final class ExpectationTimeline {
    record Epoch(int index, String label, List<Verdicts> accepted, long startNanos) {}

    private final List<Epoch> epochs = new ArrayList<>();

    ExpectationTimeline(String label, Verdicts initial) {
        enter(label, initial);
    }

    /** Starts a new epoch accepting these situations; returns its index. */
    synchronized int enter(String label, Verdicts... accepted) {
        if (accepted.length == 0) {
            throw new IllegalArgumentException("an epoch accepts at least one situation");
        }
        Epoch e = new Epoch(epochs.size(), label, List.of(accepted), System.nanoTime());
        epochs.add(e);
        return e.index();
    }

    synchronized int current() {
        return epochs.size() - 1;
    }

    synchronized Epoch epoch(int index) {
        return epochs.get(index);
    }

    synchronized List<Epoch> epochs() {
        return List.copyOf(epochs);
    }

    /** The verdicts of from -> to that some situation of epochs first..last accepts. */
    synchronized Set<Boolean> accepted(int first, int last, String from, String to) {
        Set<Boolean> out = new HashSet<>();
        for (int i = first; i <= last; i++) {
            for (Verdicts v : epochs.get(i).accepted()) {
                out.add(v.allowed(from, to));
            }
        }
        return out;
    }

    /** The labels of epochs first..last, for a report. */
    synchronized String labels(int first, int last) {
        List<String> out = new ArrayList<>();
        for (int i = first; i <= last; i++) {
            out.add(epochs.get(i).label() + " " + epochs.get(i).accepted());
        }
        return String.join(" .. ", out);
    }
}
