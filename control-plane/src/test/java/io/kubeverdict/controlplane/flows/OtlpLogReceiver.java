// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An OTLP/HTTP logs receiver on loopback, as a collector's otlp receiver answers: POST /v1/logs
 * with an ExportLogsServiceRequest in protobuf, parsed with the official opentelemetry-proto
 * messages. {@link #hold()} makes it answer no request until {@link #release()} (a slow collector).
 */
final class OtlpLogReceiver implements AutoCloseable {
    /** A log record as received: resource service name, event name, body and attributes as Java values. */
    record Received(
            String service, String eventName, String body, long timeUnixNanos, Map<String, Object> attributes) {}

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(4);
    private final List<Received> received = new ArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private volatile CountDownLatch held = new CountDownLatch(0);

    OtlpLogReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/logs", this::handle);
        server.setExecutor(threads);
        server.start();
    }

    String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/logs";
    }

    void hold() {
        held = new CountDownLatch(1);
    }

    void release() {
        held.countDown();
    }

    int requests() {
        return requests.get();
    }

    synchronized List<Received> received() {
        return List.copyOf(received);
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            requests.incrementAndGet();
            if (!"POST".equals(x.getRequestMethod())
                    || !"application/x-protobuf".equals(x.getRequestHeaders().getFirst("Content-Type"))) {
                x.sendResponseHeaders(415, -1);
                return;
            }
            ExportLogsServiceRequest request;
            try (InputStream in = x.getRequestBody()) {
                request = ExportLogsServiceRequest.parseFrom(in);
            }
            try {
                held.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            collect(request);
            byte[] answer = ExportLogsServiceResponse.getDefaultInstance().toByteArray();
            x.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            x.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
            if (answer.length > 0) {
                try (OutputStream out = x.getResponseBody()) {
                    out.write(answer);
                }
            }
        }
    }

    private synchronized void collect(ExportLogsServiceRequest request) {
        request.getResourceLogsList().forEach(rl -> {
            String service = rl.getResource().getAttributesList().stream()
                    .filter(kv -> kv.getKey().equals("service.name"))
                    .map(kv -> kv.getValue().getStringValue())
                    .findFirst()
                    .orElse("");
            rl.getScopeLogsList()
                    .forEach(sl -> sl.getLogRecordsList().forEach(r -> received.add(received(service, r))));
        });
    }

    private static Received received(String service, LogRecord r) {
        Map<String, Object> attributes = new LinkedHashMap<>();
        for (KeyValue kv : r.getAttributesList()) {
            attributes.put(kv.getKey(), value(kv.getValue()));
        }
        return new Received(service, r.getEventName(), r.getBody().getStringValue(), r.getTimeUnixNano(), attributes);
    }

    private static Object value(AnyValue v) {
        return switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> v.getIntValue();
            case BOOL_VALUE -> v.getBoolValue();
            case DOUBLE_VALUE -> v.getDoubleValue();
            case ARRAY_VALUE ->
                v.getArrayValue().getValuesList().stream()
                        .map(OtlpLogReceiver::value)
                        .toList();
            default -> v.toString();
        };
    }

    /** Stops answering: later exports fail to connect. */
    void stop() {
        release();
        server.stop(0);
    }

    @Override
    public void close() {
        stop();
        threads.shutdownNow();
    }
}
