package io.kubeverdict.agent.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Serves /metrics (Prometheus text) and /healthz on a small JDK HTTP server. */
public final class MetricsHttpServer implements AutoCloseable {
    private final HttpServer server;

    public MetricsHttpServer(InetSocketAddress bind, Supplier<String> scrape, BooleanSupplier healthy) throws IOException {
        server = HttpServer.create(bind, 16);
        server.createContext("/metrics", exchange -> respond(exchange, 200,
                "text/plain; version=0.0.4; charset=utf-8", scrape.get()));
        server.createContext("/healthz", exchange -> {
            boolean ok = healthy.getAsBoolean();
            respond(exchange, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "not enforcing yet\n");
        });
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "kv-metrics-http");
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

    private static void respond(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
