// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.flows.DecidingRule;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "observe",
        description = {
            "The live verdicts of the whole cluster, as agents decide them (like hubble observe): who, to whom, port, "
                    + "verdict and what decided. Agents upload verdicts only while someone observes, at most their "
                    + "--verdict-upload-rate per second (sampled above it); lost ones are reported.",
            "Without --follow: the next --last verdicts, waiting at most --wait. Exit status: 0, 2 for bad options, "
                    + "3 when the control plane cannot be asked or ends the stream."
        })
final class ObserveCommand implements Callable<Integer> {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final String ROW = "%-12s  %-12s  %-30s  %-30s  %-9s  %-12s  %s%n";

    enum VerdictFilter {
        all,
        allowed,
        denied
    }

    @Option(
            names = "--verdict",
            paramLabel = "allowed|denied",
            defaultValue = "all",
            description = "Only allowed or only denied verdicts (default: ${DEFAULT-VALUE}).")
    VerdictFilter verdict;

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            description = "Only connections from or to a pod in this namespace.")
    String namespace = "";

    @Option(names = "--pod", paramLabel = "NS/NAME", description = "Only connections from or to this pod.")
    String pod = "";

    @Option(names = "--node", paramLabel = "NODE", description = "Only verdicts this node's agent decided.")
    String node = "";

    @Option(
            names = {"-f", "--follow"},
            description = "Keep following until interrupted.")
    boolean follow;

    @Option(
            names = "--last",
            paramLabel = "N",
            defaultValue = "20",
            description = "Without --follow: stop after N verdicts (default: ${DEFAULT-VALUE}).")
    int last;

    @Option(
            names = "--wait",
            paramLabel = "DURATION",
            defaultValue = "PT10S",
            description =
                    "Without --follow: stop after this long even with fewer verdicts (default: ${DEFAULT-VALUE}).")
    Duration wait;

    @Mixin
    ControlPlaneClientOptions client = new ControlPlaneClientOptions();

    @Mixin
    OutputOption output = new OutputOption();

    @Spec
    CommandSpec spec;

    ZoneId zone = ZoneId.systemDefault();

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!pod.isEmpty() && (pod.indexOf('/') <= 0 || pod.endsWith("/"))) {
            err.println("--pod: want NS/NAME, got '" + pod + "'");
            err.flush();
            return ExitCodes.USAGE;
        }
        if (!follow && last < 1) {
            err.println("--last must be at least 1");
            err.flush();
            return ExitCodes.USAGE;
        }
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        ObserveVerdictsRequest request = ObserveVerdictsRequest.newBuilder()
                .setVerdict(
                        switch (verdict) {
                            case all -> Verdict.VERDICT_UNSPECIFIED;
                            case allowed -> Verdict.VERDICT_ALLOW;
                            case denied -> Verdict.VERDICT_DENY;
                        })
                .setNamespace(namespace)
                .setPod(pod)
                .setNode(node)
                .build();
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        Context.CancellableContext call = Context.current().withCancellation();
        try {
            call.run(() -> ControlPlaneInspectionGrpc.newStub(channel).observeVerdicts(request, new StreamObserver<>() {
                @Override
                public void onNext(ObservedVerdict value) {
                    inbox.add(value);
                }

                @Override
                public void onError(Throwable t) {
                    inbox.add(t);
                }

                @Override
                public void onCompleted() {
                    inbox.add(Status.OK);
                }
            }));
            return follow(inbox, out, err);
        } finally {
            call.cancel(null);
            ControlPlaneClientOptions.close(channel);
        }
    }

    private int follow(BlockingQueue<Object> inbox, PrintWriter out, PrintWriter err) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        int printed = 0;
        if (output.format() == OutputFormat.table) {
            out.printf(ROW, "TIME", "NODE", "FROM", "TO", "PORT", "VERDICT", "DECIDED BY");
            out.flush();
        }
        while (follow || printed < last) {
            Object item =
                    follow ? inbox.take() : inbox.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (item == null) {
                return ExitCodes.OK; // waited long enough
            }
            if (item instanceof Throwable t) {
                return client.failed(
                        err,
                        t instanceof StatusRuntimeException s
                                ? s
                                : Status.fromThrowable(t).asRuntimeException());
            }
            if (item instanceof Status) {
                err.println("control plane " + client.target() + " ended the stream");
                err.flush();
                return ExitCodes.UNAVAILABLE;
            }
            ObservedVerdict v = (ObservedVerdict) item;
            if (v.hasLost()) {
                if (output.format() == OutputFormat.table) {
                    err.println(
                            "(" + v.getLost().getCount() + " verdicts lost: sampled on an agent or not read in time)");
                    err.flush();
                } else {
                    print(out, v);
                }
                continue;
            }
            print(out, v);
            printed++;
        }
        return ExitCodes.OK;
    }

    private void print(PrintWriter out, ObservedVerdict v) {
        switch (output.format()) {
            case table -> out.print(row(v.getEvent(), zone));
            case json -> out.print(Rendering.json(v));
            case yaml -> out.print("---\n" + Rendering.yaml(v));
        }
        out.flush();
    }

    static String row(VerdictEvent e, ZoneId zone) {
        Explanation x = e.getExplanation();
        Instant t = Instant.ofEpochSecond(e.getTime().getSeconds(), e.getTime().getNanos());
        return String.format(
                Locale.ROOT,
                ROW,
                TIME.format(t.atZone(zone)),
                e.getNode(),
                side(x.hasSource() ? x.getSource() : null, x.getTuple().getSrcIp()),
                side(
                        x.hasDestination() ? x.getDestination() : null,
                        x.getTuple().getDstIp()),
                PortProtocol.format(x.getTuple().getDstPort(), x.getTuple().getProtocol()),
                x.getVerdict() == Verdict.VERDICT_ALLOW ? (x.getCached() ? "ALLOW+CACHED" : "ALLOW") : "DENY",
                decidedBy(x));
    }

    private static String side(EndpointId id, String ip) {
        return id == null ? ip : id.getNamespace() + "/" + id.getPod() + " (" + ip + ")";
    }

    /** The direction that decided, and its policy and rule (or the tier default, or nothing isolating). */
    static String decidedBy(Explanation x) {
        return DecidingRule.text(x);
    }
}
