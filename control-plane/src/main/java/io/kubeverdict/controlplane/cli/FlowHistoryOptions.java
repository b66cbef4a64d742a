// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.flows.FlowRecorder;
import io.kubeverdict.runtime.cli.DurationText;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The control plane's flow history: its window, buckets, caps and file. */
final class FlowHistoryOptions {
    @Option(
            names = "--flow-history-window",
            paramLabel = "DURATION",
            defaultValue = "1h",
            converter = DurationText.class,
            description = "How long the flow history keeps what agents relayed (kube-verdict flows, whatif, "
                    + "recommend); 0 turns it off, and agents then upload verdicts only while someone observes. "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration window;

    @Option(
            names = "--flow-history-bucket",
            paramLabel = "DURATION",
            defaultValue = "1m",
            converter = DurationText.class,
            description = "The flow history's time buckets: a flow is one record per bucket it was seen in. "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration bucket;

    @Option(
            names = "--flow-history-max-records",
            paramLabel = "N",
            defaultValue = "200000",
            description = "At most this many flow records; the oldest buckets go first. Default: ${DEFAULT-VALUE}.")
    int maxRecords;

    @Option(
            names = "--flow-history-max-mib",
            paramLabel = "MIB",
            defaultValue = "128",
            description = "At most about this much heap for flow records; the oldest buckets go first. "
                    + "Default: ${DEFAULT-VALUE}.")
    int maxMib;

    @Option(
            names = "--flow-history-file",
            paramLabel = "FILE",
            description = "Keep the flow history in this file too (on a volume: a restart keeps it). A file that "
                    + "cannot be read is ignored with a log.")
    Path file;

    @Option(
            names = "--flow-history-write-every",
            paramLabel = "DURATION",
            defaultValue = "1m",
            converter = DurationText.class,
            description = "How often --flow-history-file is written (and at shutdown). Default: ${DEFAULT-VALUE}.")
    Duration writeEvery;

    /** Empty when the history is off; throws {@link IllegalArgumentException} for values that do not fit. */
    Optional<FlowRecorder.Settings> settings() {
        if (window.isZero()) {
            return Optional.empty();
        }
        if (maxMib < 1) {
            throw new IllegalArgumentException("--flow-history-max-mib must be at least 1");
        }
        if (writeEvery.toMillis() < 1000) {
            throw new IllegalArgumentException("--flow-history-write-every must be at least 1s");
        }
        return Optional.of(new FlowRecorder.Settings(
                new FlowHistory.Limits(window, bucket, maxRecords, maxMib * 1024L * 1024L), file, writeEvery));
    }
}
