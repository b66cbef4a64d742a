// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import io.kubeverdict.agent.persist.StateFile;
import io.kubeverdict.agent.persist.StateFileFormat;
import io.kubeverdict.agent.persist.StateFileMetrics;
import io.kubeverdict.agent.persist.StateWriter;
import io.kubeverdict.agent.sync.Enforcer;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.proto.v1.NodeSnapshot;
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
 * state file's state is enforced when it may be (this node's, intact, not too old) and offered to
 * the control plane to resume from when it is also exactly what this agent's assembler renders;
 * from then on the file is kept current behind each enforced generation. The file is read once,
 * by whichever asks first: the sync thread for its first request, or the start for the kernel.
 */
final class KeptState {
    // The agent's logger, as before this moved out of Agent: log settings may name it.
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    /** The state file is rewritten at most this often; a kill loses at most the changes of the last one. */
    private static final long STATE_WRITE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The state file as this start found it: its state when it may be enforced (else why not), the
     * snapshot to offer to resume from (null: none), and what was logged about it (null: nothing
     * went wrong).
     */
    record Loaded(StateFileFormat.Decoded decoded, NodeSnapshot resumable, String report) {}

    private final AgentConfig config;
    private final Clock clock;
    private final StateFile file; // null with --state-dir none
    private Loaded loaded; // guarded by this

    KeptState(AgentConfig config, Clock clock) {
        this.config = config;
        this.clock = clock;
        this.file = config.state().enabled() ? new StateFile(config.state().directory(), config.node()) : null;
    }

    /** The state to offer to resume from before any stream enforced one; null: none (a full snapshot). */
    NodeSnapshot resumable() {
        return file == null ? null : loaded().resumable();
    }

    private synchronized Loaded loaded() {
        if (loaded == null) {
            loaded = load(
                    file,
                    config.node(),
                    clock.millis(),
                    TimeUnit.SECONDS.toMillis(config.state().maxAgeSeconds()));
        }
        return loaded;
    }

    /**
     * Reads and checks the state file and logs, naming the file, what cannot be used. A state is
     * offered to resume from only when it may be enforced and is exactly what this agent's
     * assembler renders ({@link SnapshotAssembler#differenceFromRendering}): a digest match then
     * means a full resync would give this very state. A state another release rendered otherwise
     * (an endpoint's IPv4-mapped address kept as sent, say) could match the control plane's digest
     * and still differ from what a resync enforces; it is enforced at boot as before, not offered.
     */
    static Loaded load(StateFile file, String node, long nowMillis, long maxAgeMillis) {
        StateFileFormat.Decoded kept = file.read(node, nowMillis, maxAgeMillis);
        if (!kept.usable()) {
            if (kept.refusal() == StateFileFormat.Refusal.MISSING) {
                log.info("no state file {}: nothing is enforced until the control plane's first snapshot", file.path());
                return new Loaded(kept, null, null);
            }
            String report = "state file " + file.path() + " not enforced: "
                    + kept.refusal().text()
                    + (kept.detail() == null ? "" : " (" + kept.detail() + ")")
                    + "; nothing is enforced until the control plane's first snapshot, and nothing offered to resume from";
            log.warn("{}", report);
            return new Loaded(kept, null, report);
        }
        PersistedNodeState state = kept.state();
        String difference = SnapshotAssembler.differenceFromRendering(state.getSnapshot());
        if (difference != null) {
            String report = "state file " + file.path() + " (written by agent " + state.getAgentVersion()
                    + ") is not offered to resume from: " + difference + "; the control plane's full snapshot follows";
            log.warn("{}", report);
            return new Loaded(kept, null, report);
        }
        log.info(
                "state file {}: offering the state of sequence {} to the control plane to resume from",
                file.path(),
                state.getSequence());
        return new Loaded(kept, state.getSnapshot(), null);
    }

    /**
     * Enforces the state file's state now, if it may be, so that a rebooted node or a restarted agent
     * enforces its last state before the control plane answers; returns the enforcer that keeps the
     * file current behind each later generation (with --state-dir none, {@code enforcer} itself).
     * The file's writer joins {@code opened}, the agent's list of what it closes in reverse order.
     */
    Enforcer keptAcrossRuns(Enforcer enforcer, List<AutoCloseable> opened, MeterRegistry registry) {
        if (file == null) {
            return enforcer;
        }
        StateWriter writer =
                new StateWriter(file, config.node(), Agent.VERSION, clock, STATE_WRITE_INTERVAL_NANOS).start();
        opened.add(writer); // closed after the sync client: the last state offered is written
        String outcome = enforceKept(loaded().decoded(), enforcer);
        StateFileMetrics.register(registry, writer, outcome);
        return (snapshot, sequence) -> {
            enforcer.enforce(snapshot, sequence);
            writer.offer(snapshot, sequence);
        };
    }

    /** @return how it went, for the start-state metric */
    private String enforceKept(StateFileFormat.Decoded kept, Enforcer enforcer) {
        if (!kept.usable()) {
            return kept.refusal().name().toLowerCase(Locale.ROOT); // logged when loaded
        }
        PersistedNodeState state = kept.state();
        try {
            enforcer.enforce(state.getSnapshot(), state.getSequence());
        } catch (Exception e) {
            // A resume from it (offered already) enforces it again like any InSync, or fails and resyncs.
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
