// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.grpc.ManagedChannel;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Where whatif and recommend get the flow history: a running control plane (ListFlows), or a file `flows -o json` wrote. */
final class FlowInput {
    /** All a control plane gives in one answer. */
    static final int ALL = 100_000;

    @Option(
            names = "--flows",
            paramLabel = "FILE",
            description = "The flow history as `kube-verdict flows -o json` wrote it, instead of asking the control "
                    + "plane.")
    Path file;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    /** The flows (namespace "" for all), or throws saying why there are none. */
    ListFlowsResponse load(String namespace) throws OfflineInput.FatalInput {
        if (file != null) {
            ListFlowsResponse.Builder b = ListFlowsResponse.newBuilder();
            try {
                JsonFormat.parser().merge(Files.readString(file, StandardCharsets.UTF_8), b);
            } catch (InvalidProtocolBufferException e) {
                throw new OfflineInput.FatalInput(
                        "--flows " + file + ": not the JSON of `flows -o json`: " + e.getMessage());
            } catch (IOException e) {
                throw new OfflineInput.FatalInput("--flows " + file + ": cannot read: " + e.getMessage());
            }
            if (namespace.isEmpty()) {
                return b.build();
            }
            ListFlowsResponse.Builder kept =
                    ListFlowsResponse.newBuilder(b.build()).clearFlows();
            b.getFlowsList().stream()
                    .filter(f -> f.getSource().getNamespace().equals(namespace)
                            || f.getDestination().getNamespace().equals(namespace))
                    .forEach(kept::addFlows);
            return kept.build();
        }
        ManagedChannel channel;
        try {
            channel = client.open();
        } catch (IllegalArgumentException | IOException e) {
            throw new OfflineInput.FatalInput(e.getMessage());
        }
        try {
            return ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .listFlows(ListFlowsRequest.newBuilder()
                            .setNamespace(namespace)
                            .setLimit(ALL)
                            .build());
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }
}
