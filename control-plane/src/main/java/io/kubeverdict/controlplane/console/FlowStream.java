// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The live flows as server-sent events: one ObserveVerdicts call of the viewer's (the relay's
 * demand, filters and lost counts, as {@code observe}), each verdict an {@code event: verdict}
 * with its VerdictEvent in proto3 JSON, losses an {@code event: lost}. A stream lasts at most
 * {@link #STREAM_SECONDS}, then says {@code event: rotate} and ends: the JDK server cuts a response
 * after its {@code maxRspTime} (a limit the metrics endpoint needs), so the page opens the next one
 * at once; a verdict between two streams may be missed and is not counted. A refusal or failure is
 * an {@code event: failure} with the gRPC code and message.
 */
final class FlowStream {
    static final long STREAM_SECONDS = 20;

    private final LocalInspection inspection;

    FlowStream(LocalInspection inspection) {
        this.inspection = inspection;
    }

    /** The request the filters ask for; unknown verdict words are refused. */
    static ObserveVerdictsRequest request(Map<String, String> q) {
        ObserveVerdictsRequest.Builder b = ObserveVerdictsRequest.newBuilder()
                .setNamespace(q.getOrDefault("namespace", ""))
                .setPod(q.getOrDefault("pod", ""))
                .setNode(q.getOrDefault("node", ""))
                .setStaged(Boolean.parseBoolean(q.getOrDefault("staged", "false")));
        String verdict = q.getOrDefault("verdict", "").strip().toLowerCase(Locale.ROOT);
        switch (verdict) {
            case "", "all" -> {}
            case "allowed", "allow" -> b.setVerdict(Verdict.VERDICT_ALLOW);
            case "denied", "deny" -> b.setVerdict(Verdict.VERDICT_DENY);
            default -> throw new IllegalArgumentException("verdict must be allowed, denied or all");
        }
        return b.build();
    }

    /** Writes events to {@code out} (response headers already sent) until the stream ends or the browser leaves. */
    void serve(Viewer viewer, ObserveVerdictsRequest request, OutputStream out) {
        Context.CancellableContext call = Context.current().withCancellation();
        try {
            call.run(() -> pump(viewer, request, out));
        } finally {
            call.cancel(null);
        }
    }

    private void pump(Viewer viewer, ObserveVerdictsRequest request, OutputStream out) {
        long n = 0;
        try {
            write(out, "retry: 1000\n\n");
            Iterator<ObservedVerdict> it = inspection
                    .blocking(viewer)
                    .withDeadlineAfter(STREAM_SECONDS, TimeUnit.SECONDS)
                    .observeVerdicts(request);
            try {
                while (it.hasNext()) {
                    ObservedVerdict v = it.next();
                    if (v.hasEvent()) {
                        write(
                                out,
                                "id: " + (++n) + "\nevent: verdict\ndata: " + ConsoleJson.text(v.getEvent()) + "\n\n");
                    } else if (v.hasLost()) {
                        write(
                                out,
                                "event: lost\ndata: {\"count\":" + v.getLost().getCount() + "}\n\n");
                    }
                }
                write(out, "event: rotate\ndata: {}\n\n");
            } catch (StatusRuntimeException e) {
                Status s = e.getStatus();
                if (s.getCode() == Status.Code.DEADLINE_EXCEEDED) {
                    write(out, "event: rotate\ndata: {}\n\n");
                } else {
                    write(
                            out,
                            "event: failure\ndata: "
                                    + ConsoleJson.write(Map.of(
                                            "code",
                                            s.getCode().name(),
                                            "message",
                                            s.getDescription() == null ? "" : s.getDescription()))
                                    + "\n\n");
                }
            }
        } catch (IOException e) {
            // The browser left: the finally of serve() cancels the call, and the relay forgets it.
        }
    }

    private static void write(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
