// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.runtime.FatalThreads;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MetricsEndpointTest {
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(MetricsEndpoint endpoint, String path, String accept) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path));
        if (accept != null) {
            b.header("Accept", accept);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesTheRegistryWithBuildInfoAndTheProbes() throws Exception {
        AtomicBoolean ready = new AtomicBoolean();
        try (ProcessMetrics metrics = new ProcessMetrics("test-component");
                MetricsEndpoint endpoint = MetricsEndpoint.start(
                        new InetSocketAddress("127.0.0.1", 0),
                        metrics.registry(),
                        List.of(
                                new MetricsEndpoint.Probe("/healthz", () -> true, "never"),
                                new MetricsEndpoint.Probe("/readyz", ready::get, "not ready yet"),
                                new MetricsEndpoint.Probe(
                                        "/broken",
                                        () -> {
                                            throw new IllegalStateException("boom");
                                        },
                                        "check failed")))) {
            Counter.builder("kubeverdict_test_events")
                    .register(metrics.registry())
                    .increment(3);

            HttpResponse<String> scrape = get(endpoint, "/metrics", null);
            assertThat(scrape.statusCode()).isEqualTo(200);
            assertThat(scrape.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
            assertThat(scrape.body())
                    .contains("kubeverdict_build_info{component=\"test-component\",version=\"" + BuildVersion.current()
                            + "\"} 1")
                    .contains("kubeverdict_test_events_total 3.0")
                    .contains("jvm_memory_used_bytes")
                    .contains("process_uptime_seconds");

            HttpResponse<String> openMetrics = get(endpoint, "/metrics", "application/openmetrics-text; version=1.0.0");
            assertThat(openMetrics.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(t -> assertThat(t).startsWith("application/openmetrics-text"));
            assertThat(openMetrics.body())
                    .contains("# TYPE kubeverdict_build info")
                    .endsWith("# EOF\n");

            assertThat(get(endpoint, "/healthz", null).body()).isEqualTo("ok\n");
            HttpResponse<String> notReady = get(endpoint, "/readyz", null);
            assertThat(notReady.statusCode()).isEqualTo(503);
            assertThat(notReady.body()).isEqualTo("not ready yet\n");
            ready.set(true);
            HttpResponse<String> isReady = get(endpoint, "/readyz", null);
            assertThat(isReady.statusCode()).isEqualTo(200);
            assertThat(isReady.body()).isEqualTo("ok\n");

            assertThat(get(endpoint, "/broken", null).statusCode()).isEqualTo(503);
            assertThat(get(endpoint, "/", null).statusCode()).isEqualTo(404);
            assertThat(get(endpoint, "/-/healthy", null).statusCode())
                    .as("the exporter's always-healthy path")
                    .isEqualTo(404);
            assertThat(get(endpoint, "/healthz/x", null).statusCode()).isEqualTo(404);
        }
    }

    /** Audit M4: a worker thread that died fails every probe, with its name, until the process exits. */
    @Test
    void aDeadWorkerThreadFailsEveryProbe() throws Exception {
        try (FatalThreads.Observed observed = FatalThreads.observeForTest();
                ProcessMetrics metrics = new ProcessMetrics("test-component");
                MetricsEndpoint endpoint = MetricsEndpoint.start(
                        new InetSocketAddress("127.0.0.1", 0),
                        metrics.registry(),
                        List.of(
                                new MetricsEndpoint.Probe("/healthz", () -> true, "never"),
                                new MetricsEndpoint.Probe("/readyz", () -> true, "never")))) {
            assertThat(get(endpoint, "/healthz", null).statusCode()).isEqualTo(200);
            Thread verdict = FatalThreads.worker("verdict-loop-q0", () -> {
                throw new AssertionError("judge");
            });
            verdict.start();
            verdict.join(30_000);

            for (String probe : List.of("/healthz", "/readyz")) {
                HttpResponse<String> r = get(endpoint, probe, null);
                assertThat(r.statusCode()).isEqualTo(503);
                assertThat(r.body()).contains("verdict-loop-q0").contains("AssertionError");
            }
            assertThat(observed.exitCodes()).containsExactly(FatalThreads.EXIT_CODE);
        }
    }

    /**
     * Audit L7: slow-loris connections (a header byte every 10 s) must not hold the probes. The JDK
     * server reads a request on an executor thread; the exporter's default pool has ten.
     */
    @Test
    void slowConnectionsNeitherBlockTheProbesNorStayOpen() throws Exception {
        try (ProcessMetrics metrics = new ProcessMetrics("test-component");
                MetricsEndpoint endpoint = MetricsEndpoint.start(
                        new InetSocketAddress("127.0.0.1", 0),
                        metrics.registry(),
                        List.of(
                                new MetricsEndpoint.Probe("/healthz", () -> true, "never"),
                                new MetricsEndpoint.Probe("/readyz", () -> true, "never")))) {
            assertThat(System.getProperty("sun.net.httpserver.maxReqTime"))
                    .as("the JDK server's request limit is ours, not the exporter's default")
                    .isEqualTo(Long.toString(HttpLimits.MAX_REQUEST_SECONDS));
            assertThat(System.getProperty("sun.net.httpserver.maxRspTime"))
                    .isEqualTo(Long.toString(HttpLimits.MAX_RESPONSE_SECONDS));
            List<Socket> slow = new ArrayList<>();
            ScheduledExecutorService dribble = Executors.newSingleThreadScheduledExecutor();
            try {
                for (int i = 0; i < 12; i++) {
                    Socket s = new Socket("127.0.0.1", endpoint.port());
                    // below the exporter's own 60 s default, which once replaced ours (5 s)
                    s.setSoTimeout(30_000);
                    slow.add(s);
                }
                byte[] request = "GET /readyz HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII);
                AtomicInteger sent = new AtomicInteger();
                Runnable oneByteEach = () -> {
                    int at = sent.getAndIncrement();
                    for (Socket s : slow) {
                        try {
                            s.getOutputStream().write(request[at % request.length]);
                        } catch (IOException closedByTheServer) {
                            // expected once the server gives up on it
                        }
                    }
                };
                oneByteEach.run();
                dribble.scheduleAtFixedRate(oneByteEach, 10, 10, TimeUnit.SECONDS);

                HttpClient patient = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(30))
                        .build();
                for (String probe : List.of("/readyz", "/healthz", "/metrics")) {
                    HttpResponse<String> r = patient.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + probe))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(probe).isEqualTo(200);
                }

                // The server gives up on each: end of stream (or a reset), well before the test's bound.
                for (Socket s : slow) {
                    try {
                        assertThat(s.getInputStream().read())
                                .as("a slow request is closed by the server")
                                .isEqualTo(-1);
                    } catch (SocketException reset) {
                        // closed by the server while we wrote: as good
                    }
                }
            } finally {
                dribble.shutdownNow();
                for (Socket s : slow) {
                    s.close();
                }
            }
        }
    }

    @Test
    void theExporterIsTheReleaseOfThePrometheusClientMicrometerBrings() throws IOException {
        assertThat(mavenVersion("prometheus-metrics-exporter-httpserver"))
                .isEqualTo(mavenVersion("prometheus-metrics-core"))
                .isEqualTo(mavenVersion("prometheus-metrics-model"));
    }

    private static String mavenVersion(String artifact) throws IOException {
        String resource = "/META-INF/maven/io.prometheus/" + artifact + "/pom.properties";
        try (InputStream in = MetricsEndpointTest.class.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        }
    }
}
