// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.Testbed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Probes every ordered pod pair on each target and compares what happened with the engine. A
 * probe that differs is looked at once more with twice the timeout, and that second observation
 * is reported: on a loaded machine a verdict can arrive after the timeout and look like a drop.
 * Only the observation is repeated; the comparison is the same.
 */
final class PairProbes {
    private final Testbed testbed;
    private final Engine engine;
    private final Duration timeout;
    private final Progress progress;

    PairProbes(Testbed testbed, Engine engine, Duration timeout, Progress progress) {
        this.testbed = testbed;
        this.engine = engine;
        this.timeout = timeout;
        this.progress = progress;
    }

    List<ProbeResult> probe(List<ServePort> targets) throws Exception {
        List<ProbeResult> results = new ArrayList<>();
        for (ServePort target : targets) {
            ProbeResult result = ProbeResult.compare(engine.expected(target), testbed.probe(target, timeout));
            if (!result.agrees()) {
                progress.note(target + ": " + result.mismatches().size() + " pairs differ, probing again");
                result = ProbeResult.compare(result.expected(), testbed.probe(target, timeout.multipliedBy(2)));
            }
            results.add(result);
        }
        return results;
    }
}
