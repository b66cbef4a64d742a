// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.packet.PacketParser;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class AgentMetricsTest {

    @Test
    void servesVerdictQueueSyncAndJvmMetricsOverHttp() throws Exception {
        QueueCounters queue = new QueueCounters(3, 1234, 5, 2, 128, 3, 1, 42);
        AtomicBoolean enforcing = new AtomicBoolean();
        try (AgentMetrics metrics = new AgentMetrics(
                        new SyncStatus(), new StateHolder(0), () -> Optional.of(queue), Clock.systemUTC());
                MetricsEndpoint http = MetricsEndpoint.start(
                        new InetSocketAddress("127.0.0.1", 0),
                        metrics.registry(),
                        List.of(new MetricsEndpoint.Probe("/healthz", enforcing::get, "not enforcing yet")))) {
            metrics.verdicts().verdict(4, Protocol.TCP_VALUE, true, 2_000);
            metrics.verdicts().verdict(4, Protocol.TCP_VALUE, true, 3_000);
            metrics.verdicts().verdict(6, Protocol.UDP_VALUE, false, 1_000);
            metrics.verdicts().verdict(6, Protocol.ICMPV6_VALUE, false, 1_000);
            metrics.verdicts().unreadable(PacketParser.BEYOND_COPY);
            metrics.verdicts().unreadable(-1); // not a parse result: counted as malformed

            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/metrics"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            String body = response.body();

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(body)
                    .contains("kubeverdict_verdicts_total{family=\"ipv4\",protocol=\"tcp\",verdict=\"accept\"} 2.0");
            assertThat(body)
                    .contains("kubeverdict_verdicts_total{family=\"ipv6\",protocol=\"udp\",verdict=\"drop\"} 1.0");
            assertThat(body)
                    .contains("kubeverdict_verdicts_total{family=\"ipv6\",protocol=\"icmpv6\",verdict=\"drop\"} 1.0");
            assertThat(body).contains("kubeverdict_malformed_packets_total{reason=\"beyond_copy\"} 1.0");
            assertThat(body).contains("kubeverdict_malformed_packets_total{reason=\"malformed\"} 1.0");
            assertThat(body).contains("kubeverdict_malformed_packets_total{reason=\"too_many_headers\"} 0.0");
            assertThat(body).contains("kubeverdict_packet_processing_seconds_count 4");
            assertThat(body).contains("kubeverdict_packet_processing_seconds_bucket");
            assertThat(body).contains("kubeverdict_queue_packets_total 42.0");
            assertThat(body).contains("kubeverdict_queue_dropped_total 3.0");
            assertThat(body).contains("kubeverdict_queue_user_dropped_total 1.0");
            assertThat(body).contains("kubeverdict_queue_waiting 5.0");
            assertThat(body).contains("kubeverdict_queue_bound 1.0");
            assertThat(body).contains("kubeverdict_sync_in_sync 0.0");
            assertThat(body).contains("kubeverdict_sync_reconnects_total 0.0");
            assertThat(body).contains("jvm_memory_used_bytes");
            assertThat(body)
                    .contains(
                            "kubeverdict_build_info{component=\"agent\",version=\"" + BuildVersion.current() + "\"} 1");

            HttpResponse<String> health = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/healthz"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(503);
            enforcing.set(true);
            assertThat(client.send(
                                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/healthz"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
        }
    }
}
