// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.Protocol;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "matrix",
        description = {
            "Print which endpoint pods may open new connections to which: from manifests (--manifests DIR) or from a "
                    + "running control plane (--control-plane HOST:PORT: every node's published snapshot, evaluated here "
                    + "with the agents' verdict function).",
            "Exit status: 0, 2 bad options or input, 3 when the control plane cannot be asked."
        })
final class MatrixCommand implements Callable<Integer> {
    enum Proto {
        TCP,
        UDP,
        SCTP
    }

    @Mixin
    OfflineInput input;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Option(names = "--port", defaultValue = "80", description = "Destination port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--protocol",
            defaultValue = "TCP",
            description = "TCP, UDP or SCTP, any case (default: ${DEFAULT-VALUE}).")
    String protocol;

    @Option(
            names = {"-n", "--namespace"},
            split = ",",
            paramLabel = "NAMESPACE",
            description = "Only the pods of these namespaces, as sources and as destinations (repeat it or give a "
                    + "comma list; default: every pod).")
    List<String> namespaces = new ArrayList<>();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        try {
            return run();
        } catch (OutOfMemoryError e) {
            // run()'s frames, and the cluster they held, are gone here: there is room to say so.
            return OutOfMemory.report(spec.commandLine().getErr(), input.describeForMemory());
        }
    }

    private int run() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (port < 1 || port > 65535) {
                throw new OfflineInput.FatalInput("--port must be 1-65535");
            }
            Proto proto;
            try {
                proto = Proto.valueOf(protocol.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new OfflineInput.FatalInput("--protocol must be TCP, UDP or SCTP");
            }
            InputChoice.check(input, client);
            OfflineCluster cluster;
            List<WhatIfDefaults.Assignment> assignments = List.of();
            if (input.given()) {
                OfflineInput.Loaded loaded = input.load(err);
                cluster = loaded.cluster();
                assignments = loaded.assignments();
            } else {
                cluster = OfflineCluster.fromSnapshots(liveSnapshots());
            }
            Predicate<OfflineCluster.Member> include = chosen(cluster);
            // In json/yaml, stdout carries exactly the matrix; the assigned addresses go to stderr.
            PrintWriter notes = output.format().isTable() ? out : err;
            for (WhatIfDefaults.Assignment a : assignments) {
                notes.println("assigned " + a.pod() + " " + a.ip());
            }
            // table and json are written a row at a time as computed: a big cluster's matrix never sits
            // in memory. YAML has no streaming writer here, so it builds the matrix first.
            Protocol p = Protocol.valueOf(proto.name());
            switch (output.format()) {
                case table, wide -> {
                    if (!assignments.isEmpty()) {
                        out.println();
                    }
                    ConnectivityMatrix.writeTable(cluster, p, port, include, out);
                }
                case json -> {
                    ConnectivityMatrix.writeJson(cluster, p, port, include, out);
                    out.println();
                }
                case yaml ->
                    out.print(Rendering.machine(
                            OutputFormat.yaml,
                            ConnectivityMatrix.of(cluster, p, port, include).toValue()));
            }
            out.flush();
            err.flush();
            return ExitCodes.OK;
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        }
    }

    /** The members of the -n namespaces (every member without -n); a namespace without pods is an error. */
    private Predicate<OfflineCluster.Member> chosen(OfflineCluster cluster) throws OfflineInput.FatalInput {
        Set<String> wanted = new TreeSet<>();
        for (String n : namespaces) {
            if (!n.isBlank()) {
                wanted.add(n.strip());
            }
        }
        if (wanted.isEmpty()) {
            return m -> true;
        }
        Set<String> known = new TreeSet<>();
        cluster.members().forEach(m -> known.add(m.namespace()));
        Set<String> unknown = new TreeSet<>(wanted);
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new OfflineInput.FatalInput("no pods in namespace " + String.join(", ", unknown)
                    + " (namespaces with pods: " + String.join(", ", known) + ")");
        }
        return m -> wanted.contains(m.namespace());
    }

    /** Every node's current snapshot, as the control plane publishes them to agents. */
    private List<NodeSnapshot> liveSnapshots() throws OfflineInput.FatalInput {
        ManagedChannel channel;
        try {
            channel = client.open();
        } catch (IllegalArgumentException | IOException e) {
            throw new OfflineInput.FatalInput(e.getMessage());
        }
        try {
            ControlPlaneInspectionBlockingStub stub = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS);
            List<NodeSnapshot> snapshots = new ArrayList<>();
            for (NodeStatus n : NodeListing.all(stub).getNodesList()) {
                snapshots.add(stub.getSnapshot(
                        GetSnapshotRequest.newBuilder().setNode(n.getNode()).build()));
            }
            return snapshots;
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }
}
