// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControlPlaneMetricsTest {
    @Test
    void aPolicysProblemSeriesLivesAsLongAsItsProblems() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ControlPlaneMetrics m = new ControlPlaneMetrics(registry);
        m.problemsByPolicy(Map.of("x/a", 2, "y/b", 1));
        assertThat(registry.get("kubeverdict_policy_problems_by_policy")
                        .tags("namespace", "x", "policy", "a")
                        .gauge()
                        .value())
                .isEqualTo(2);
        m.problemsByPolicy(Map.of("x/a", 1));
        assertThat(registry.get("kubeverdict_policy_problems_by_policy").gauges())
                .hasSize(1);
        assertThat(registry.get("kubeverdict_policy_problems_by_policy").gauge().value())
                .isEqualTo(1);
        m.problemsByPolicy(Map.of());
        assertThat(registry.find("kubeverdict_policy_problems_by_policy").gauges())
                .isEmpty();
    }

    @Test
    void nodeStatesAreReadWhenScraped() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ControlPlaneMetrics m = new ControlPlaneMetrics(registry);
        m.nodeCounts(() -> new ControlPlaneMetrics.NodeCounts(3, 1, 0, 2, 17));
        assertThat(registry.get("kubeverdict_nodes")
                        .tag("state", "disconnected")
                        .gauge()
                        .value())
                .isEqualTo(2);
        assertThat(registry.get("kubeverdict_max_node_lag_messages").gauge().value())
                .isEqualTo(17);
    }
}
