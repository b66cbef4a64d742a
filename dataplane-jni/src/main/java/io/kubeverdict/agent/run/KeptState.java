// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.persist.StateFile;
import io.kubeverdict.agent.persist.StateFileFormat;
import io.kubeverdict.agent.persist.StateFileMetrics;
import io.kubeverdict.agent.persist.StateWriter;
import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.proto.v1.PersistedNodeState;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's state across runs ({@link AgentConfig#state()}, see {@link StateFile}): at start the
 * state file's state is enforced when it may be (this node's, intact, not too old), and from then
 * on the file is kept current behind each enforced generation.
 */
final class KeptState {
    // The agent's logger, as before this moved out of Agent: log settings may name it.
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    /** The state file is rewritten at most this often; a kill loses at most the changes of the last one. */
    private static final long STATE_WRITE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private KeptState() {}

    /**
     * Enforces the state file's state now, if it may be, so that a rebooted node or a restarted agent
     * enforces its last state before the control plane answers; returns the enforcer that keeps the
     * file current behind each later generation. The file's writer joins {@code opened}, the
     * agent's list of what it closes in reverse order.
     */
    static Enforcer keptAcrossRuns(
            AgentConfig config, Enforcer enforcer, Clock clock, List<AutoCloseable> opened, MeterRegistry registry) {
        StateFile file = new StateFile(config.state().directory(), config.node());
        StateWriter writer =
                new StateWriter(file, config.node(), Agent.VERSION, clock, STATE_WRITE_INTERVAL_NANOS).start();
        opened.add(writer); // closed after the sync client: the last state offered is written
        String outcome = enforceKept(config, file, enforcer, clock);
        StateFileMetrics.register(registry, writer, outcome);
        return (snapshot, sequence) -> {
            enforcer.enforce(snapshot, sequence);
            writer.offer(snapshot, sequence);
        };
    }

    /** @return how it went, for the start-state metric */
    private static String enforceKept(AgentConfig config, StateFile file, Enforcer enforcer, Clock clock) {
        StateFileFormat.Decoded kept = file.read(
                config.node(),
                clock.millis(),
                TimeUnit.SECONDS.toMillis(config.state().maxAgeSeconds()));
        if (!kept.usable()) {
            if (kept.refusal() == StateFileFormat.Refusal.MISSING) {
                log.info("no state file {}: nothing is enforced until the control plane's first snapshot", file.path());
            } else {
                log.warn(
                        "state file {} not enforced: {}{}; nothing is enforced until the control plane's first snapshot",
                        file.path(),
                        kept.refusal().text(),
                        kept.detail() == null ? "" : " (" + kept.detail() + ")");
            }
            return kept.refusal().name().toLowerCase(Locale.ROOT);
        }
        PersistedNodeState state = kept.state();
        try {
            enforcer.enforce(state.getSnapshot(), state.getSequence());
        } catch (Exception e) {
            log.warn(
                    "state file {}: enforcing its state failed: {}; nothing is enforced until the control plane's "
                            + "first snapshot",
                    file.path(),
                    e.toString());
            return "failed";
        }
        log.info(
                "enforcing the kept state of sequence {} from {} ({} endpoints, written {} s ago by agent {}) until the "
                        + "control plane's first snapshot",
                state.getSequence(),
                file.path(),
                state.getSnapshot().getEndpointsCount(),
                (clock.millis() - state.getWrittenUnixMillis()) / 1000,
                state.getAgentVersion());
        return "enforced";
    }
}
