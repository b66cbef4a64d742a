// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ServePort;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What the end-to-end tests do to a running sandbox: change its policies, probe every pair, compare. */
final class PolicyProbes {
    private PolicyProbes() {}

    /** Writes {@code policies} as the watched directory's policies.yaml and waits until the sandbox took them. */
    static void writePolicies(Sandbox sandbox, Path manifests, String policies) throws Exception {
        Files.writeString(manifests.resolve("policies.yaml"), policies);
        assertThat(sandbox.reload())
                .as("pods unchanged, so the running sandbox takes the change")
                .isTrue();
    }

    /** Probes every ordered pair on each port and asserts that what was observed is what the engine says. */
    static List<ProbeResult> probeAgreeing(Sandbox sandbox, List<ServePort> probes) throws Exception {
        List<ProbeResult> results = sandbox.probe(probes);
        List<String> failures = new ArrayList<>();
        for (ProbeResult r : results) {
            if (!r.agrees()) {
                failures.add(TableRenderer.render(r));
            }
        }
        assertThat(failures).as("observed != engine").isEmpty();
        return results;
    }
}
