// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import com.sun.net.httpserver.HttpServer;
import io.kubeverdict.controlplane.flows.FlowEvents;
import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.flows.OtlpFlowExport;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * What exporting a flow record as an OTLP log costs (issue #31): per record, handing it out of the
 * history, building the log record, batching, protobuf and HTTP to a loopback receiver that reads
 * and discards the body; against the baseline of the same run, recording one verdict into the
 * history (FlowEvents + FlowHistory.record). Run: ./mvnw -B -o -pl control-plane -am -Pbenchmarks
 * -DskipTests verify -Dbench.main=io.kubeverdict.controlplane.bench.FlowExportBenchmark
 */
public final class FlowExportBenchmark {
    private static final int RECORDS = 100_000;
    private static final long MIN = 60_000;

    private FlowExportBenchmark() {}

    public static void main(String[] args) throws Exception {
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        receiver.createContext("/v1/logs", x -> {
            try (x;
                    InputStream in = x.getRequestBody()) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
                x.sendResponseHeaders(200, -1);
            }
        });
        receiver.setExecutor(Executors.newFixedThreadPool(2));
        receiver.start();
        URI endpoint = URI.create("http://127.0.0.1:" + receiver.getAddress().getPort() + "/v1/logs");
        try {
            for (int round = 0; round < 5; round++) {
                round(round, endpoint);
            }
        } finally {
            receiver.stop(0);
            System.exit(0);
        }
    }

    private static void round(int round, URI endpoint) throws Exception {
        long now = (System.currentTimeMillis() / MIN) * MIN;
        FlowHistory history = new FlowHistory(
                new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 2 * RECORDS, 1L << 40));
        List<VerdictEvent> events = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            events.add(FlowHistoryBenchmark.event(i, now - 30 * MIN)); // in a bucket that ended
        }
        Map<String, String> labels = Map.of("app", "w", "pod-template-hash", "7d4b9c5f6", "tier", "backend");
        long t0 = System.nanoTime();
        for (VerdictEvent e : events) {
            history.record(FlowEvents.observation(e, pod -> labels).orElseThrow(), now);
        }
        long recordNanos = System.nanoTime() - t0;

        MeterRegistry registry = new SimpleMeterRegistry();
        OtlpFlowExport export = OtlpFlowExport.start(
                new OtlpFlowExport.Settings(endpoint, Map.of(), null, Duration.ofMillis(200), RECORDS), registry);
        long t1 = System.nanoTime();
        export.accept(history.unexported(now));
        long handedNanos = System.nanoTime() - t1;
        while (sent(registry) < RECORDS) {
            Thread.sleep(5);
        }
        long exportNanos = System.nanoTime() - t1;
        export.close();
        System.out.printf(
                Locale.ROOT,
                "round %d: record %.2f us/verdict; export %.2f us/record (of which handed to the SDK %.2f us); "
                        + "export/record %.2f; %.0f records/s; failed %.0f dropped %.0f%n",
                round,
                recordNanos / 1e3 / RECORDS,
                exportNanos / 1e3 / RECORDS,
                handedNanos / 1e3 / RECORDS,
                exportNanos / (double) recordNanos,
                RECORDS / (exportNanos / 1e9),
                count(registry, "failed"),
                count(registry, "dropped"));
    }

    private static double sent(MeterRegistry r) {
        return count(r, "exported") + count(r, "failed") + count(r, "dropped");
    }

    private static double count(MeterRegistry r, String outcome) {
        return r.counter("kubeverdict_flow_export_records_total", "outcome", outcome)
                .count();
    }
}
