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
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.kubeverdict.runtime.cli.DurationText;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
            "--last N and --since DURATION first show past verdicts the control plane still holds (the most recent "
                    + "4096 it relayed: every verdict while its flow history is on, the default; otherwise only "
                    + "those relayed while someone observed) and stop, as hubble observe does; with --follow, then live ones.",
            "Without --last, --since or --follow: the next --count live verdicts, waiting at most --wait. Exit "
                    + "status: 0, 2 for bad options, 3 when the control plane cannot be asked or ends the stream."
        })
final class ObserveCommand implements Callable<Integer> {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final String ROW = "%-12s  %-12s  %-30s  %-30s  %-9s  %-9s  %-14s  %s%n";
    /** How long an event waits for earlier ones of other agents (their uploads run on their own). */
    private static final long ORDER_HOLD_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private ObserveFilter filter;
    private boolean history;
    private boolean following;

    @Option(
            names = "--verdict",
            paramLabel = "allowed|denied",
            defaultValue = "all",
            converter = VerdictWords.Filter.class,
            description = "Only allowed or only denied verdicts, any case (allow/deny and accept/drop too; "
                    + "default: ${DEFAULT-VALUE}).")
    Verdict verdict;

    @Option(
            names = {"-n", "--namespace"},
            paramLabel = "NS",
            description = "Only connections from or to a pod in this namespace.")
    String namespace = "";

    @Option(names = "--pod", paramLabel = "NS/NAME", description = "Only connections from or to this pod.")
    String pod = "";

    @Option(names = "--node", paramLabel = "NODE", description = "Only verdicts this node's agent decided.")
    String node = "";

    @Option(names = "--from-pod", paramLabel = "NS/NAME", description = "Only connections from this pod.")
    String fromPod = "";

    @Option(names = "--to-pod", paramLabel = "NS/NAME", description = "Only connections to this pod.")
    String toPod = "";

    @Option(names = "--port", paramLabel = "P", description = "Only connections to this destination port.")
    int port = -1;

    @Option(names = "--from-port", paramLabel = "P", description = "Only connections from this source port.")
    int fromPort = -1;

    @Option(
            names = "--protocol",
            paramLabel = "PROTO",
            description = "Only this protocol: TCP, UDP, SCTP, ICMP, ICMPv6 or a number.")
    String protocol = "";

    @Option(
            names = "--policy",
            paramLabel = "NS/NAME",
            description = "Only verdicts this policy decided (NS/NAME; TIER/NAME for the admin tiers), as DECIDED BY "
                    + "names it.")
    String policy = "";

    @Option(
            names = {"-l", "--label"},
            paramLabel = "KEY=VALUE",
            split = ",",
            description = "Only connections whose source or destination pod has these labels (repeatable, or "
                    + "comma-separated: all must match on one side).")
    Map<String, String> labels = new LinkedHashMap<>();

    @Option(
            names = "--staged",
            description = "Only verdicts that staged policies would change, with the would-be verdict and the staged"
                    + " policy and rule.")
    boolean staged;

    @Option(
            names = {"-f", "--follow"},
            negatable = true,
            description = "Keep following until interrupted (after the past verdicts with --last or --since, which "
                    + "otherwise stop at them).")
    Boolean follow;

    @Option(
            names = "--last",
            paramLabel = "N",
            description = "First the past N verdicts the control plane still holds that match --verdict, "
                    + "--namespace, --pod (or --from-pod/--to-pod) and --node; the other filters may show fewer.")
    int last;

    @Option(
            names = "--since",
            paramLabel = "DURATION",
            converter = DurationText.class,
            description = "First the held verdicts the control plane relayed within this long (e.g. 5m; with "
                    + "--last: at most N of them).")
    Duration since;

    @Option(
            names = "--count",
            paramLabel = "N",
            defaultValue = "20",
            description =
                    "Without --last, --since or --follow: stop after N live verdicts (default: ${DEFAULT-VALUE}).")
    int count;

    @Option(
            names = "--wait",
            paramLabel = "DURATION",
            converter = DurationText.class,
            defaultValue = "10s",
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
        for (String[] named : new String[][] {{"--pod", pod}, {"--from-pod", fromPod}, {"--to-pod", toPod}}) {
            if (!named[1].isEmpty() && (named[1].indexOf('/') <= 0 || named[1].endsWith("/"))) {
                err.println(named[0] + ": want NS/NAME, got '" + named[1] + "'");
                err.flush();
                return ExitCodes.USAGE;
            }
        }
        int proto = protocol.isEmpty() ? -1 : PortProtocol.parse(protocol);
        if (!protocol.isEmpty() && proto < 0) {
            err.println("--protocol: unknown protocol " + protocol);
            err.flush();
            return ExitCodes.USAGE;
        }
        String bad = last < 0
                ? "--last must not be negative"
                : since != null && (since.isNegative() || since.isZero())
                        ? "--since must be positive"
                        : count < 1 ? "--count must be at least 1" : null;
        if (bad != null) {
            err.println(bad);
            err.flush();
            return ExitCodes.USAGE;
        }
        history = last > 0 || since != null;
        following = follow != null && follow; // hubble's habit: --last/--since show the past and stop
        ManagedChannel channel = client.openOrReport(err);
        if (channel == null) {
            return ExitCodes.USAGE;
        }
        try {
            var stub = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS);
            String unknown = ObserveTargets.unknown(stub, pod, node);
            for (String side : List.of(fromPod, toPod)) {
                unknown = unknown != null ? unknown : ObserveTargets.unknown(stub, side, "");
            }
            if (unknown != null) {
                err.println(unknown);
                err.flush();
                ControlPlaneClientOptions.close(channel);
                return ExitCodes.USAGE;
            }
        } catch (StatusRuntimeException e) {
            ControlPlaneClientOptions.close(channel);
            return client.failed(err, e);
        }
        ObserveVerdictsRequest.Builder requested = ObserveVerdictsRequest.newBuilder()
                .setVerdict(verdict)
                .setNamespace(namespace)
                // The control plane filters by one pod on either side: the narrowest one given.
                .setPod(!pod.isEmpty() ? pod : !fromPod.isEmpty() ? fromPod : toPod)
                .setNode(node)
                .setStaged(staged)
                .setLast(last);
        if (since != null) {
            requested.setSince(com.google.protobuf.Duration.newBuilder()
                    .setSeconds(since.getSeconds())
                    .setNanos(since.getNano()));
        }
        ObserveVerdictsRequest request = requested.build();
        filter = new ObserveFilter(
                fromPod,
                toPod,
                port,
                fromPort,
                proto,
                policy,
                labels,
                name -> ObserveTargets.labels(
                        ControlPlaneInspectionGrpc.newBlockingStub(channel)
                                .withDeadlineAfter(client.deadlineMillis(), TimeUnit.MILLISECONDS),
                        name));
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
        // Not following: the past verdicts end at the control plane's mark; else --count live ones.
        int limit = following || history ? Integer.MAX_VALUE : count;
        int printed = 0;
        TimeOrder order = new TimeOrder(ORDER_HOLD_NANOS);
        if (output.format().isTable()) {
            out.printf(ROW, "TIME", "NODE", "FROM", "TO", "PORT", "DIRECTION", "VERDICT", "DECIDED BY");
            out.flush();
        }
        while (following || printed < limit) {
            long now = System.nanoTime();
            long until = Math.min(order.nanosUntilNext(now), following ? Long.MAX_VALUE : Math.max(0, deadline - now));
            Object item = inbox.poll(until, TimeUnit.NANOSECONDS);
            if (item == null) {
                now = System.nanoTime();
                boolean over = !following && now - deadline >= 0; // waited long enough: what is held goes out
                for (ObservedVerdict v : over ? order.drain() : order.due(now)) {
                    if (following || printed < limit) {
                        print(out, v);
                        printed++;
                    }
                }
                if (over) {
                    return ExitCodes.OK;
                }
                continue;
            }
            if (!(item instanceof ObservedVerdict)) {
                for (ObservedVerdict v : order.drain()) { // the stream ends: what arrived is still shown
                    if (following || printed++ < limit) {
                        print(out, v);
                    }
                }
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
            if (v.hasHistoryEnd()) {
                if (!following) {
                    order.drain().forEach(held -> print(out, held));
                    return ExitCodes.OK;
                }
                continue;
            }
            if (v.hasLost()) {
                if (output.format().isTable()) {
                    err.println(
                            "(" + v.getLost().getCount() + " verdicts lost: sampled on an agent or not read in time)");
                    err.flush();
                } else {
                    print(out, v);
                }
                continue;
            }
            boolean wanted;
            try {
                wanted = filter.matches(v.getEvent().getExplanation()); // --label may ask for a pod's labels
            } catch (StatusRuntimeException e) {
                return client.failed(err, e);
            }
            if (wanted) {
                order.add(v, System.nanoTime());
            }
        }
        return ExitCodes.OK;
    }

    private void print(PrintWriter out, ObservedVerdict v) {
        switch (output.format()) {
            case table, wide -> out.print(row(v.getEvent(), zone));
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
                side(
                        x.hasSource() ? x.getSource() : null,
                        withPort(x.getTuple().getSrcIp(), x.getTuple().getSrcPort())),
                side(
                        x.hasDestination() ? x.getDestination() : null,
                        x.getTuple().getDstIp()),
                PortProtocol.format(x.getTuple().getDstPort(), x.getTuple().getProtocol()),
                decidingDirection(x),
                // A verdict the kernel's cache gave without asking the JVM again says so.
                VerdictWords.of(x.getVerdict())
                        + (x.getVerdict() == Verdict.VERDICT_ALLOW && x.getCached() ? "+cached" : "")
                        // the agent counted this many verdicts of the key into one event
                        + (e.getCount() > 1 ? " x" + e.getCount() : ""),
                x.hasStaged() ? decidedBy(x) + "; " + wouldBe(x.getStaged()) : decidedBy(x));
    }

    /**
     * The would-be part of a row: "staged: would be denied by ingress x/deny-all (tier default)", or with
     * a live policy deciding behind the staged one, "... by ingress x/allow-web ingress[0] (after
     * staged anp:trial)".
     */
    static String wouldBe(StagedVerdict s) {
        String head = "staged: would be " + VerdictWords.of(s.getVerdict());
        if (!s.hasStagedPolicy()) {
            return head + " (" + s.getReason() + ")";
        }
        String rule = s.getRuleId().isEmpty() ? "(tier default)" : s.getRuleId();
        String staged = PoliciesCommand.policyName(s.getStagedPolicy());
        if (s.hasDecidingPolicy()) {
            return head + " by " + s.getDirection() + " " + PoliciesCommand.policyName(s.getDecidingPolicy()) + " "
                    + rule + " (after staged " + staged + ")";
        }
        return head + " by " + s.getDirection() + " " + staged + " " + rule;
    }

    /** The direction whose verdict stands (egress or ingress), or "-" when no policy isolates either side. */
    static String decidingDirection(Explanation x) {
        String by = decidedBy(x);
        return by.startsWith("egress ") ? "egress" : by.startsWith("ingress ") ? "ingress" : "-";
    }

    /** "10.0.0.1:43512", "[fd00::1]:43512"; the address alone without a port. */
    static String withPort(String ip, int port) {
        return port == 0 ? ip : (ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip) + ":" + port;
    }

    private static String side(EndpointId id, String ip) {
        return id == null ? ip : id.getNamespace() + "/" + id.getPod() + " (" + ip + ")";
    }

    /** The direction that decided, and its policy and rule (or the tier default, or nothing isolating). */
    static String decidedBy(Explanation x) {
        return DecidingRule.text(x);
    }
}
