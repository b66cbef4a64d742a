// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.testbed.ObservedMatrix;
import io.kubeverdict.testbed.Outcome;
import java.util.ArrayList;
import java.util.List;

/**
 * One probe compared: the engine's expected matrix beside the observed one, and every ordered
 * pair of different pods where they differ. A pod's connection to itself never leaves the pod
 * (loopback), so no node can enforce it: the diagonal is shown but not compared (upstream's
 * AllowLoopback). observed is null when the protocol cannot be probed here (SCTP); such a
 * probe has no mismatches and says so in {@link #unsupported()}.
 */
public record ProbeResult(ConnectivityMatrix expected, ObservedMatrix observed, List<List<String>> mismatches) {

    public static ProbeResult compare(ConnectivityMatrix expected, ObservedMatrix observed) {
        List<List<String>> mismatches = new ArrayList<>();
        if (observed != null && !unsupported(observed)) {
            if (!observed.pods().equals(expected.pods())) {
                throw new IllegalStateException("the engine's pods " + expected.pods()
                        + " are not the pods the sandbox runs " + observed.pods());
            }
            for (String from : expected.pods()) {
                for (String to : expected.pods()) {
                    if (!from.equals(to) && expected.allowed(from, to) != observed.connected(from, to)) {
                        mismatches.add(List.of(from, to));
                    }
                }
            }
        }
        return new ProbeResult(expected, observed, List.copyOf(mismatches));
    }

    private static boolean unsupported(ObservedMatrix observed) {
        return observed.pods().stream().anyMatch(p -> observed.outcome(p, p) == Outcome.UNSUPPORTED);
    }

    public boolean unsupported() {
        return observed == null || unsupported(observed);
    }

    public boolean agrees() {
        return mismatches.isEmpty();
    }

    /** "TCP", "UDP" or "SCTP". */
    public String protocol() {
        return expected.protocol().name();
    }
}
