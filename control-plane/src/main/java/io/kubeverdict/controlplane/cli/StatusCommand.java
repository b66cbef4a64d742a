// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import com.google.protobuf.util.Timestamps;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.ListPolicyReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.NodeStatus;
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
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "status",
        description = {
            "Every node's agent as the control plane sees it: connected and in sync, applied vs sent sequence, lag, "
                    + "programming latency p50/p99, agent version, uptime, last contact.",
            "With --policies: every policy's enforcement receipt (enforced on N of M nodes at its newest generation, "
                    + "since when, write-to-enforced latency, lagging nodes); with KIND/NAMESPACE/NAME (or KIND/NAME "
                    + "for the admin tiers) those policies with their nodes.",
            "SOURCE REVISION: which version of a manifest directory the snapshots reflect (a SHA-256 over its "
                    + "files; none for the Kubernetes API); a rejected load is said below it.",
            "Exit status: 0 when every node is in sync (every policy asked for is enforced), 1 when one is not "
                    + "(disconnected, still syncing, or behind: applied < sent; a policy lagging or unknown) or the "
                    + "control plane rejected its latest manifest load, "
                    + "2 for bad options, 3 when the control plane cannot be asked."
        })
final class StatusCommand implements Callable<Integer> {
    /** How a node's stream stands, in the words of the STATE column. */
    enum NodeState {
        IN_SYNC("in-sync"),
        BEHIND("behind"),
        SYNCING("syncing"),
        DISCONNECTED("disconnected");

        final String word;

        NodeState(String word) {
            this.word = word;
        }

        static NodeState of(NodeStatus n) {
            if (!n.getConnected()) {
                return DISCONNECTED;
            }
            if (!n.getInSync()) {
                return SYNCING;
            }
            return n.getLag() > 0 ? BEHIND : IN_SYNC;
        }
    }

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Mixin
    OutputOption output = new OutputOption();

    @Option(names = "--policies", description = "Every policy's enforcement receipt instead of the nodes' streams.")
    boolean policies;

    @Parameters(
            arity = "0..*",
            paramLabel = "KIND/NAMESPACE/NAME",
            description = "Policies to show with their nodes: networkpolicy/NS/NAME, adminnetworkpolicy/NAME, "
                    + "baselineadminnetworkpolicy/NAME, clusternetworkpolicy/NAME (kubectl's short names too).")
    List<String> named = List.of();

    @Spec
    CommandSpec spec;

    Clock clock = Clock.systemUTC();

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (policies || !named.isEmpty()) {
            return policies(out, err);
        }
        ListNodesResponse nodes;
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        try {
            nodes = NodeListing.all(ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS));
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
        out.print(
                output.format().isTable()
                        ? table(nodes, clock.instant(), output.format() == OutputFormat.wide)
                        : Rendering.machine(output.format(), nodes));
        out.flush();
        long outOfSync = nodes.getNodesList().stream()
                .filter(n -> NodeState.of(n) != NodeState.IN_SYNC)
                .count();
        boolean rejected = !nodes.getSourceProblem().isEmpty();
        if (rejected) {
            // In sync with what the control plane has, which is not what was written.
            err.println("the control plane's source is not applied: " + nodes.getSourceProblem()
                    + "; the nodes keep enforcing the source revision before it");
        }
        if (outOfSync > 0) {
            err.println(outOfSync + " of " + nodes.getNodesCount() + " nodes not in sync");
        } else if (nodes.getNodesCount() == 0) {
            err.println("no nodes: no endpoints published and no agent connected");
        }
        err.flush();
        return outOfSync > 0 || rejected ? ExitCodes.NEGATIVE : ExitCodes.OK;
    }

    private int policies(PrintWriter out, PrintWriter err) {
        if (policies && !named.isEmpty()) {
            err.println("--policies shows every policy; name policies without it");
            err.flush();
            return ExitCodes.USAGE;
        }
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        ListPolicyReceiptsResponse receipts;
        try {
            receipts = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .listPolicyReceipts(ListPolicyReceiptsRequest.newBuilder()
                            .addAllPolicies(named)
                            .build());
        } catch (StatusRuntimeException e) {
            return client.failed(err, e);
        } finally {
            ControlPlaneClientOptions.close(channel);
        }
        Instant now = clock.instant();
        out.print(
                !output.format().isTable()
                        ? Rendering.machine(output.format(), receipts)
                        : named.isEmpty() ? ReceiptText.table(receipts, now) : ReceiptText.detail(receipts, now));
        out.flush();
        long notEnforced = receipts.getReceiptsList().stream()
                        .filter(r -> !r.getEnforced())
                        .count()
                + receipts.getUnknownCount();
        if (notEnforced > 0) {
            err.println(notEnforced + " of " + (receipts.getReceiptsCount() + receipts.getUnknownCount())
                    + " policies not enforced on every node");
        } else if (receipts.getReceiptsCount() == 0) {
            err.println("no policies");
        }
        err.flush();
        return notEnforced > 0 ? ExitCodes.NEGATIVE : ExitCodes.OK;
    }

    static String table(ListNodesResponse nodes, Instant now) {
        return table(nodes, now, false);
    }

    /** wide: also the latency's sample count, the node's source revision and the times themselves (UTC). */
    static String table(ListNodesResponse nodes, Instant now, boolean wide) {
        List<String> header = new ArrayList<>(
                List.of("NODE", "STATE", "APPLIED/SENT", "LAG", "P50", "P99", "VERSION", "UPTIME", "LAST CONTACT"));
        if (wide) {
            header.addAll(List.of("SAMPLES", "SOURCE REVISION", "AGENT STARTED", "LAST CONTACT AT"));
        }
        TextTable t = new TextTable(header.toArray(String[]::new));
        for (NodeStatus n : nodes.getNodesList()) {
            boolean seen = n.getSentSequence() > 0 || n.getConnected();
            List<String> row = new ArrayList<>(List.of(
                    n.getNode(),
                    NodeState.of(n).word,
                    seen ? n.getAppliedSequence() + "/" + n.getSentSequence() : "",
                    seen ? String.valueOf(n.getLag()) : "",
                    n.hasProgrammingLatencyP50() ? Durations.compact(duration(n.getProgrammingLatencyP50())) : "",
                    n.hasProgrammingLatencyP99() ? Durations.compact(duration(n.getProgrammingLatencyP99())) : "",
                    n.getAgentVersion(),
                    n.hasAgentStartTime() && n.getConnected()
                            ? Durations.compact(since(n.getAgentStartTime(), now))
                            : "",
                    n.hasLastContact() ? Durations.compact(since(n.getLastContact(), now)) + " ago" : ""));
            if (wide) {
                row.addAll(List.of(
                        n.hasProgrammingLatencyP50() ? String.valueOf(n.getProgrammingLatencySamples()) : "",
                        shortRevision(n.getSourceRevision()),
                        n.hasAgentStartTime() ? Timestamps.toString(n.getAgentStartTime()) : "",
                        n.hasLastContact() ? Timestamps.toString(n.getLastContact()) : ""));
            }
            t.row(row.toArray(String[]::new));
        }
        // Which version of the manifest directory the snapshots above reflect (a SHA-256 over its
        // files: compare it with ManifestRevision of a checkout); the Kubernetes API has none.
        String revision = nodes.getSourceRevision().isEmpty()
                ? ""
                : "source revision " + nodes.getSourceRevision()
                        + " (the manifest files the snapshots above were computed from)\n";
        String problem = nodes.getSourceProblem().isEmpty() ? "" : "NOT APPLIED: " + nodes.getSourceProblem() + "\n";
        return t.render() + revision + problem;
    }

    /** The first 12 hex digits, as git shortens a hash; enough to tell revisions apart here. */
    private static String shortRevision(String revision) {
        return revision.length() > 12 ? revision.substring(0, 12) : revision;
    }

    private static Duration duration(com.google.protobuf.Duration d) {
        return Duration.ofSeconds(d.getSeconds(), d.getNanos());
    }

    private static Duration since(com.google.protobuf.Timestamp t, Instant now) {
        return Duration.between(Instant.ofEpochMilli(Timestamps.toMillis(t)), now);
    }
}
