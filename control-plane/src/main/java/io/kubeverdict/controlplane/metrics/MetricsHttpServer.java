package io.kubeverdict.controlplane.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * Serves the Prometheus scrape at /metrics, /healthz (the process serves) and /readyz (200 once the
 * first full calculation is published, 503 before) on a small JDK HTTP server. /readyz lets a
 * kubelet httpGet probe work when the gRPC port requires client certificates.
 */
public final class MetricsHttpServer implements AutoCloseable {
    private final HttpServer server;

    public MetricsHttpServer(InetSocketAddress bind, PrometheusMeterRegistry registry, BooleanSupplier ready)
            throws IOException {
        server = HttpServer.create(bind, 0);
        server.createContext("/metrics", ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8",
                registry.scrape()));
        server.createContext("/healthz", ex -> respond(ex, 200, "text/plain", "ok\n"));
        server.createContext("/readyz", ex -> {
            boolean r = ready.getAsBoolean();
            respond(ex, r ? 200 : 503, "text/plain", r ? "ready\n" : "first calculation not done\n");
        });
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "metrics-http");
            t.setDaemon(true);
            return t;
        }));
    }

    public MetricsHttpServer start() {
        server.start();
        return this;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, int code, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(code, bytes.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
