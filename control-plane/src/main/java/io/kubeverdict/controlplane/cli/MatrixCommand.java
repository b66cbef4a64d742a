package io.kubeverdict.controlplane.cli;

import io.kubeverdict.controlplane.manifests.WhatIfDefaults;
import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.proto.v1.Protocol;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "matrix", mixinStandardHelpOptions = true,
        description = "Print which endpoint pods may open new connections to which, from manifests.")
final class MatrixCommand implements Callable<Integer> {
    enum Proto { TCP, UDP, SCTP }

    enum Output { table, json }

    @Mixin
    OfflineInput input;

    @Option(names = "--port", defaultValue = "80", description = "Destination port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--protocol", defaultValue = "TCP", description = "TCP, UDP or SCTP, any case (default: ${DEFAULT-VALUE}).")
    String protocol;

    @Option(names = "--output", defaultValue = "table", description = "table or json (default: ${DEFAULT-VALUE}).")
    Output output;

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
        if (port < 1 || port > 65535) {
            err.println("--port must be 1-65535");
            return 2;
        }
        Proto proto;
        try {
            proto = Proto.valueOf(protocol.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            err.println("--protocol must be TCP, UDP or SCTP");
            return 2;
        }
        OfflineInput.Loaded loaded;
        try {
            loaded = input.load(err);
        } catch (OfflineInput.FatalInput e) {
            err.println(e.getMessage());
            err.flush();
            return 2;
        }
        // In JSON mode stdout carries exactly one object; the assigned addresses go to stderr.
        PrintWriter assignments = output == Output.json ? err : out;
        for (WhatIfDefaults.Assignment a : loaded.assignments()) {
            assignments.println("assigned " + a.pod() + " " + a.ip());
        }
        // Written a row at a time as it is computed: a big cluster's matrix never sits in memory.
        Protocol p = Protocol.valueOf(proto.name());
        if (output == Output.json) {
            ConnectivityMatrix.writeJson(loaded.cluster(), p, port, out);
            out.println();
        } else {
            if (!loaded.assignments().isEmpty()) {
                out.println();
            }
            ConnectivityMatrix.writeTable(loaded.cluster(), p, port, out);
        }
        out.flush();
        err.flush();
        return 0;
    }
}
