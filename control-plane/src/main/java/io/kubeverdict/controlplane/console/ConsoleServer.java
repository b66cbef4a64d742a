// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.runtime.metrics.HttpLimits;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's console: a read-only web page of the live state, served by the JDK's HTTP server
 * within {@link HttpLimits} (as the metrics endpoint). The page and its assets are the jar's own
 * (no CDN: air-gapped clusters work) under a strict Content-Security-Policy (no inline script or
 * style, nothing from elsewhere); its data comes from {@code /api/*}, each answer asked of the
 * inspection service as the browser's viewer ({@link ConsoleAccess}, {@link LocalInspection}).
 */
public final class ConsoleServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConsoleServer.class);
    /** Event streams at once: each holds a server thread for up to {@link FlowStream#STREAM_SECONDS}. */
    static final int MAX_STREAMS = 8;

    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final Map<String, String[]> ASSETS = Map.of(
            "/", new String[] {"index.html", "text/html; charset=utf-8"},
            "/console.js", new String[] {"console.js", "text/javascript; charset=utf-8"},
            "/console.css", new String[] {"console.css", "text/css; charset=utf-8"});

    private final HttpServer server;
    private final ExecutorService executor;
    private final ConsoleAccess access;
    private final ConsoleQueries queries;
    private final FlowStream flows;
    private final Semaphore streams = new Semaphore(MAX_STREAMS);

    private ConsoleServer(
            HttpServer server, ExecutorService executor, ConsoleAccess access, LocalInspection inspection) {
        this.server = server;
        this.executor = executor;
        this.access = access;
        this.queries = new ConsoleQueries(inspection);
        this.flows = new FlowStream(inspection);
    }

    /**
     * Binds and serves; the threads are daemons.
     *
     * @param tokens whether the control plane reviews bearer tokens ({@code --auth token})
     */
    public static ConsoleServer start(InetSocketAddress bind, LocalInspection inspection, boolean tokens)
            throws IOException {
        if (bind.isUnresolved()) {
            throw new IOException("cannot bind the console to unresolved " + bind);
        }
        ExecutorService executor = HttpLimits.executor("console-http-");
        HttpServer http = HttpServer.create(bind, 64);
        ConsoleServer console = new ConsoleServer(http, executor, new ConsoleAccess(tokens), inspection);
        http.createContext("/", console::handle);
        http.setExecutor(executor);
        http.start();
        return console;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try {
            headers(exchange);
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                text(exchange, 405, "read-only: GET only");
                return;
            }
            String path = exchange.getRequestURI().getRawPath();
            if (path.startsWith("/api/")) {
                api(exchange, path);
            } else {
                asset(exchange, path);
            }
        } catch (RuntimeException e) {
            log.warn("console request {} failed: {}", exchange.getRequestURI().getRawPath(), e.toString());
        } finally {
            exchange.close();
        }
    }

    /** Every answer: nothing cached, sniffed, framed or referred; scripts and styles only from here. */
    private static void headers(HttpExchange exchange) {
        var h = exchange.getResponseHeaders();
        h.set("Content-Security-Policy", CSP);
        h.set("X-Content-Type-Options", "nosniff");
        h.set("X-Frame-Options", "DENY");
        h.set("Referrer-Policy", "no-referrer");
        h.set("Cache-Control", "no-store");
        h.set("Cross-Origin-Resource-Policy", "same-origin");
    }

    /** The page and its two assets, from the jar; they hold no data, so they need no viewer. */
    private static void asset(HttpExchange exchange, String path) throws IOException {
        String[] asset = ASSETS.get(path);
        if (asset == null) {
            text(exchange, 404, "not found");
            return;
        }
        byte[] body;
        try (InputStream in = ConsoleServer.class.getResourceAsStream(asset[0])) {
            if (in == null) {
                text(exchange, 500, "the console's " + asset[0] + " is missing from this build");
                return;
            }
            body = in.readAllBytes();
        }
        send(exchange, 200, asset[1], body);
    }

    private void api(HttpExchange exchange, String path) throws IOException {
        ConsoleAccess.Decision d = access.decide(
                exchange.getRequestHeaders().getFirst("Authorization"),
                exchange.getRemoteAddress(),
                exchange.getRequestHeaders().getFirst("Host"));
        if (d.viewer() == null) {
            if (d.status() == 401) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"kube-verdict\"");
            }
            json(exchange, d.status(), error("UNAUTHENTICATED", d.why()));
            return;
        }
        Viewer viewer = d.viewer();
        Map<String, String> q = query(exchange.getRequestURI().getRawQuery());
        try {
            switch (path) {
                case "/api/nodes" -> json(exchange, 200, queries.nodes(viewer));
                case "/api/pods" ->
                    json(
                            exchange,
                            200,
                            queries.pods(
                                    viewer,
                                    number(q.getOrDefault("offset", "0")),
                                    number(q.getOrDefault("limit", "" + ConsoleQueries.MAX_PODS_PAGE))));
                case "/api/pod" -> json(exchange, 200, queries.pod(viewer, q.getOrDefault("name", "")));
                case "/api/explain" -> json(exchange, 200, queries.explain(viewer, q));
                case "/api/policy" ->
                    json(exchange, 200, queries.policy(viewer, q.getOrDefault("tier", ""), q.getOrDefault("name", "")));
                case "/api/matrix" ->
                    json(
                            exchange,
                            200,
                            queries.matrix(
                                    viewer,
                                    q.getOrDefault("port", "80"),
                                    q.getOrDefault("protocol", "TCP"),
                                    namespaces(q.getOrDefault("namespaces", ""))));
                case "/api/flows" -> flows(exchange, viewer, FlowStream.request(q));
                default -> json(exchange, 404, error("NOT_FOUND", "no such API: " + path));
            }
        } catch (StatusRuntimeException e) {
            Status s = e.getStatus();
            json(exchange, httpStatus(s.getCode()), error(s.getCode().name(), s.getDescription()));
        } catch (IllegalArgumentException e) {
            json(exchange, 400, error("INVALID_ARGUMENT", e.getMessage()));
        }
    }

    private void flows(HttpExchange exchange, Viewer viewer, ObserveVerdictsRequest request) throws IOException {
        if (!streams.tryAcquire()) {
            json(
                    exchange,
                    503,
                    error("RESOURCE_EXHAUSTED", "the console serves " + MAX_STREAMS + " live streams at most"));
            return;
        }
        try {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                flows.serve(viewer, request, out);
            }
        } finally {
            streams.release();
        }
    }

    static int httpStatus(Status.Code code) {
        return switch (code) {
            case UNAUTHENTICATED -> 401;
            case PERMISSION_DENIED -> 403;
            case NOT_FOUND -> 404;
            case INVALID_ARGUMENT -> 400;
            case RESOURCE_EXHAUSTED -> 429;
            case UNAVAILABLE, DEADLINE_EXCEEDED -> 503;
            case UNIMPLEMENTED -> 501;
            default -> 500;
        };
    }

    private static String error(String code, String message) {
        return ConsoleJson.write(Map.of("code", code, "message", message == null ? "" : message));
    }

    private static Set<String> namespaces(String list) {
        Set<String> out = new TreeSet<>();
        Arrays.stream(list.split(","))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .forEach(out::add);
        return out;
    }

    private static int number(String text) {
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number: " + text);
        }
    }

    /** name=value pairs of the query, decoded; the first of a repeated name counts. */
    static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.putIfAbsent(name, value);
        }
        return out;
    }

    private static void json(HttpExchange exchange, int status, String body) throws IOException {
        send(exchange, status, "application/json; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }

    private static void text(HttpExchange exchange, int status, String body) throws IOException {
        send(exchange, status, "text/plain; charset=utf-8", (body + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        boolean head = "HEAD".equals(exchange.getRequestMethod());
        exchange.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
