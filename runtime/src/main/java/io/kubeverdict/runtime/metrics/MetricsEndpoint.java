// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.kubeverdict.runtime.FatalThreads;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The HTTP endpoint of both processes: the Prometheus client's own exporter serves the registry at
 * {@code /metrics} (text or OpenMetrics as the scraper asks, gzip), and each {@link Probe} answers
 * on its path for kubelet httpGet probes: 200 {@code ok} or 503 with the reason. Other paths: 404.
 *
 * <p>Slow clients must not hold the probes (audit L7): ten connections sending a byte now and then
 * once made {@code /readyz} time out behind the exporter's own ten-thread pool that blocks the
 * accepting thread. The server runs within {@link HttpLimits}: request and response time limits
 * and a queue instead of a hand-off, so a probe behind slow requests waits at most that long.
 */
public final class MetricsEndpoint implements AutoCloseable {
    /** A health path: {@code check} true means 200, false means 503 with {@code failure} as the body. */
    public record Probe(String path, BooleanSupplier check, String failure) {}

    private final HTTPServer server;

    private MetricsEndpoint(HTTPServer server) {
        this.server = server;
    }

    /** Binds and serves; the threads are daemons. */
    public static MetricsEndpoint start(InetSocketAddress bind, PrometheusMeterRegistry registry, List<Probe> probes)
            throws IOException {
        if (bind.isUnresolved()) {
            throw new IOException("cannot bind the metrics endpoint to unresolved " + bind);
        }
        // First: loading the exporter's HTTPServer sets the JDK server's limits to its own defaults
        // (60 s and 600 s) unless they are set, and the JDK reads them once; ours must come first.
        ExecutorService executor = HttpLimits.executor("metrics-http-");
        HTTPServer server = HTTPServer.builder()
                .inetAddress(bind.getAddress())
                .port(bind.getPort())
                .registry(registry.getPrometheusRegistry())
                .metricsHandlerPath("/metrics")
                // Its /-/healthy always says healthy; our probes say something.
                .registerHealthHandler(false)
                .defaultHandler(new ProbeHandler(probes))
                .executorService(executor)
                .buildAndStart();
        return new MetricsEndpoint(server);
    }

    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.close();
    }

    /** Serves every path but /metrics: the probes by exact path, anything else 404. */
    private static final class ProbeHandler implements HttpHandler {
        private final Map<String, Probe> byPath;

        ProbeHandler(List<Probe> probes) {
            byPath = probes.stream().collect(Collectors.toUnmodifiableMap(Probe::path, Function.identity()));
        }

        @Override
        public void handle(HttpExchange exchange) throws IOException {
            try {
                Probe probe = byPath.get(exchange.getRequestURI().getPath());
                if (probe == null) {
                    respond(exchange, 404, "not found\n");
                } else if (!FatalThreads.healthy()) {
                    // Every probe: a process whose worker thread died is neither live nor ready.
                    respond(exchange, 503, FatalThreads.death() + "\n");
                } else if (healthy(probe)) {
                    respond(exchange, 200, "ok\n");
                } else {
                    respond(exchange, 503, probe.failure() + "\n");
                }
            } finally {
                exchange.close();
            }
        }

        /** A check that throws counts as failing: a probe never answers ok by accident. */
        private static boolean healthy(Probe probe) {
            try {
                return probe.check().getAsBoolean();
            } catch (RuntimeException e) {
                return false;
            }
        }

        private static void respond(HttpExchange exchange, int status, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }
    }
}
