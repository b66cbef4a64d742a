// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.util.Timestamps;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.runtime.cli.DurationText;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "flows",
        description = {
            "The control plane's flow history: what talked to what (per workload, port and protocol), allowed or "
                    + "denied by which policy and rule, how often, first and last seen; merged over the history's "
                    + "window (control-plane --flow-history-window), most seen first.",
            "Exit status: 0, 2 for bad options, 3 when the control plane cannot be asked."
        })
final class FlowsCommand implements Callable<Integer> {
    @Option(
            names = "--namespace",
            paramLabel = "NS",
            description = "Only flows from or to a workload in this namespace.")
    String namespace = "";

    @Option(names = "--pod", paramLabel = "NS/NAME", description = "Only flows from or to this pod's workload.")
    String pod = "";

    @Option(
            names = "--verdict",
            paramLabel = "allowed|denied",
            defaultValue = "all",
            converter = VerdictWords.Filter.class,
            description = "Only allowed or only denied flows (default: ${DEFAULT-VALUE}).")
    Verdict verdict;

    @Option(
            names = "--policy",
            paramLabel = "NS/NAME|TIER/NAME",
            description = "Only flows this policy decided (a NetworkPolicy as NS/NAME, admin tiers as TIER/NAME).")
    String policy = "";

    @Option(
            names = "--staged",
            description = "Only flows the staged policies would decide otherwise (kube-verdict.io/staged).")
    boolean staged;

    @Option(
            names = "--since",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "Only flows seen in this last while (e.g. 10m); default: the whole window.")
    Duration since;

    @Option(
            names = "--limit",
            paramLabel = "N",
            defaultValue = "1000",
            description = "At most N flows (default: ${DEFAULT-VALUE}; at most 100000).")
    int limit;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    Clock clock = Clock.systemUTC();

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!pod.isEmpty() && (pod.indexOf('/') <= 0 || pod.endsWith("/"))) {
            err.println("--pod: want NS/NAME, got '" + pod + "'");
            err.flush();
            return ExitCodes.USAGE;
        }
        if (limit < 1 || (since != null && (since.isNegative() || since.isZero()))) {
            err.println(limit < 1 ? "--limit must be at least 1" : "--since must be a positive duration");
            err.flush();
            return ExitCodes.USAGE;
        }
        ListFlowsRequest.Builder request = ListFlowsRequest.newBuilder()
                .setNamespace(namespace)
                .setPod(pod)
                .setVerdict(verdict)
                .setPolicy(policy)
                .setStaged(staged)
                .setLimit(limit);
        if (since != null) {
            request.setSince(Timestamps.fromMillis(clock.millis() - since.toMillis()));
        }
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        try {
            ListFlowsResponse flows = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .listFlows(request.build());
            switch (output.format()) {
                case table -> {
                    out.print(table(flows));
                    if (flows.getOmitted() > 0) {
                        err.println("(" + flows.getOmitted() + " more flows: --limit)");
                    }
                }
                case json, yaml -> out.print(Rendering.machine(output.format(), flows));
            }
            out.flush();
            err.flush();
            return ExitCodes.OK;
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
    }

    /** The table; a STAGED column (what the staged policies would decide) only when a flow has one. */
    String table(ListFlowsResponse flows) {
        boolean anyStaged = flows.getFlowsList().stream().anyMatch(FlowRecord::hasStaged);
        List<String> header = new ArrayList<>(
                List.of("FROM", "TO", "PORT", "VERDICT", "DECIDED BY", "COUNT", "FIRST SEEN", "LAST SEEN"));
        if (anyStaged) {
            header.add("STAGED");
        }
        TextTable t = new TextTable(header.toArray(new String[0]));
        Instant now = clock.instant();
        for (FlowRecord f : flows.getFlowsList()) {
            List<Object> row = new ArrayList<>(List.of(
                    side(f.getSource()),
                    side(f.getDestination()),
                    PortProtocol.format(f.getPort(), f.getProtocol()),
                    VerdictWords.of(f.getVerdict()),
                    f.getDecidedBy(),
                    f.getCount(),
                    ago(now, f.getFirstSeen()),
                    ago(now, f.getLastSeen())));
            if (anyStaged) {
                row.add(
                        f.hasStaged()
                                ? "would be " + VerdictWords.of(f.getStaged().getVerdict()) + ": "
                                        + f.getStaged().getReason()
                                : "");
            }
            t.row(row.toArray());
        }
        return t.render();
    }

    /** "ns/workload" or the address outside the cluster. */
    static String side(FlowSide s) {
        return s.getNamespace().isEmpty() ? s.getAddress() : s.getNamespace() + "/" + s.getWorkload();
    }

    private static String ago(Instant now, com.google.protobuf.Timestamp t) {
        return Durations.compact(Duration.between(Instant.ofEpochMilli(Timestamps.toMillis(t)), now)) + " ago";
    }
}
