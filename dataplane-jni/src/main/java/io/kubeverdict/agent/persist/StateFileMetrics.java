// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.persist;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/** What the state file did: how this start began, and whether writes keep up. */
public final class StateFileMetrics {
    private StateFileMetrics() {}

    /** @param startOutcome how this start used the file: "enforced", or the lower-case refusal, or "failed" */
    public static void register(MeterRegistry registry, StateWriter writer, String startOutcome) {
        Gauge.builder("kubeverdict_agent_start_state", () -> 1)
                .description(
                        "How this agent began: 1 for outcome=enforced (the kept state was enforced before the "
                                + "control plane answered), else the reason it was not (missing, corrupt, foreign_node, too_old ...)")
                .tag("outcome", startOutcome)
                .register(registry);
        FunctionCounter.builder("kubeverdict_agent_state_file_writes", writer, StateWriter::written)
                .description("Enforced states written to the state file")
                .tag("result", "ok")
                .register(registry);
        FunctionCounter.builder("kubeverdict_agent_state_file_writes", writer, StateWriter::failed)
                .description("Enforced states written to the state file")
                .tag("result", "failed")
                .register(registry);
        Gauge.builder("kubeverdict_agent_state_file_stale", writer, w -> w.failing() ? 1 : 0)
                .description("1 while the last write of the state file failed (full or read-only disk): the agent "
                        + "enforces from memory, and a restart would start from an older state")
                .register(registry);
    }
}
