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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The HTTP endpoint of both processes: the Prometheus client's own exporter serves the registry at
 * {@code /metrics} (text or OpenMetrics as the scraper asks, gzip), and each {@link Probe} answers
 * on its path for kubelet httpGet probes: 200 {@code ok} or 503 with the reason. Other paths: 404.
 *
 * <p>Slow clients must not hold the probes (audit L7). The JDK server under the exporter reads each
 * request on an executor thread and by default waits for its headers forever; the exporter's own
 * pool has ten threads and blocks the accepting thread when they are busy, so ten connections
 * sending a byte now and then made {@code /readyz} time out. Here the server gives up on a request
 * whose headers have not arrived within {@link #MAX_REQUEST_SECONDS} and on a response not taken
 * within {@link #MAX_RESPONSE_SECONDS} (the JDK server's own limits, {@code
 * sun.net.httpserver.maxReqTime}/{@code maxRspTime}, unless the JVM was started with them), and
 * requests are served by {@link #THREADS} threads with a queue instead of a hand-off, so the
 * accepting thread never waits and a probe behind slow requests waits at most that long.
 */
public final class MetricsEndpoint implements AutoCloseable {
    static final int THREADS = 32;
    static final long MAX_REQUEST_SECONDS = 5;
    static final long MAX_RESPONSE_SECONDS = 30;

    static {
        // Read once, when the JVM makes its first com.sun.net.httpserver server: this class makes
        // the processes' only one, so setting them here, before it, is early enough.
        defaultProperty("sun.net.httpserver.maxReqTime", MAX_REQUEST_SECONDS);
        defaultProperty("sun.net.httpserver.maxRspTime", MAX_RESPONSE_SECONDS);
    }

    private static void defaultProperty(String name, long seconds) {
        if (System.getProperty(name) == null) {
            System.setProperty(name, Long.toString(seconds));
        }
    }

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
        HTTPServer server = HTTPServer.builder()
                .inetAddress(bind.getAddress())
                .port(bind.getPort())
                .registry(registry.getPrometheusRegistry())
                .metricsHandlerPath("/metrics")
                // Its /-/healthy always says healthy; our probes say something.
                .registerHealthHandler(false)
                .defaultHandler(new ProbeHandler(probes))
                .executorService(executor())
                .buildAndStart();
        return new MetricsEndpoint(server);
    }

    /** Threads made as needed up to {@link #THREADS}, idle ones let go; beyond them a queue (HTTPServer.close shuts it down). */
    private static ExecutorService executor() {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "metrics-http-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
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
