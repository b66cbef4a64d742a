// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.util.JsonFormat;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.controlplane.flows.FlowEvents;
import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.flows.FlowQueries;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** A flow history of netpol-basic's real verdicts (explained as the agents decide them), written as `flows -o json`. */
final class ExampleHistory {
    /** A connection to record: addresses, protocol and port. */
    record Connection(String from, String to, int protocol, int port) {}

    private ExampleHistory() {}

    static Path write(Path file, List<Connection> connections) throws Exception {
        OfflineCluster cluster = FlowsCommandTest.example();
        FlowHistory history =
                new FlowHistory(new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 1000, 1 << 24));
        long now = System.currentTimeMillis();
        for (Connection c : connections) {
            VerdictEvent e = VerdictEvent.newBuilder()
                    .setTime(Timestamps.fromMillis(now))
                    .setExplanation(cluster.explain(c.from(), c.to(), c.protocol(), c.port()))
                    .build();
            history.record(
                    FlowEvents.observation(
                                    e,
                                    pod -> cluster.endpoint(pod)
                                            .map(p -> p.labels())
                                            .orElse(Map.of()))
                            .orElseThrow(),
                    now);
        }
        Files.writeString(
                file, JsonFormat.printer().print(FlowQueries.answer(history, ListFlowsRequest.getDefaultInstance())));
        return file;
    }

    /** The example's manifests copied into dir (to change them). */
    static Path copyExample(Path dir) throws Exception {
        Files.createDirectories(dir);
        try (Stream<Path> files = Files.list(Path.of(FlowsCommandTest.EXAMPLE))) {
            for (Path p : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
                Files.copy(p, dir.resolve(p.getFileName()));
            }
        }
        return dir;
    }
}
