// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.observe.VerdictUplink;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.sync.SyncStatus;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.metrics.MetricsEndpoint;
import io.kubeverdict.testing.tools.Promtool;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code promtool check metrics} on real scrapes of both processes' metrics endpoints: the control
 * plane running on a manifest directory with an agent stream open, and the agent's registry after
 * verdicts, an nft apply and sync progress. Also: no histogram exports more than a few buckets.
 */
class MetricsLintTest {
    private static final Pattern BUCKET = Pattern.compile("^(\\w+)_bucket\\{(.*)\\} .*$");
    private static final int MAX_BUCKETS = 17; // 16 boundaries + Inf

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void theControlPlanesScrapePassesPromtool(@TempDir Path manifests) throws Exception {
        Promtool promtool = Promtool.require();
        Files.writeString(manifests.resolve("cluster.yaml"), """
                apiVersion: v1
                kind: Namespace
                metadata: {name: x, labels: {kubernetes.io/metadata.name: x}}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: a, labels: {app: a}}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.1}
                ---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: only-b}
                spec:
                  podSelector: {matchLabels: {app: a}}
                  ingress: [{from: [{podSelector: {matchLabels: {app: b}}}, {ipBlock: {cidr: 10.0.0.300/8}}]}]
                """);
        try (ControlPlane cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(manifests, new EngineDirectoryReader()))) {
            cp.firstCalculation().get(60, TimeUnit.SECONDS);
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                    .usePlaintext()
                    .build();
            try {
                syncOnce(channel, "n1");
                // A name no Node of the cluster has is refused, and never a label value.
                Iterator<ToAgent> madeUp = PolicySyncGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(30, TimeUnit.SECONDS)
                        .sync(SyncRequest.newBuilder()
                                .setNode("made-up-node")
                                .setAgentVersion("test")
                                .build());
                assertThatThrownBy(madeUp::hasNext)
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
                String scrape = scrape(cp.metricsPort());
                assertThat(scrape)
                        .contains("kubeverdict_nodes{state=\"in_sync\"} 1.0")
                        .contains("kubeverdict_policy_problems 1.0")
                        .contains("kubeverdict_policy_problems_by_policy{namespace=\"x\",policy=\"only-b\"} 1.0")
                        .contains("kubeverdict_manifest_problems")
                        .contains("kubeverdict_calculation_seconds_bucket")
                        .contains("kubeverdict_snapshot_size_bytes_bucket")
                        .contains("process_cpu_seconds_total")
                        .contains("kubeverdict_node_lag_messages{node=\"n1\"}")
                        .doesNotContain("made-up-node");
                assertLint(promtool, scrape);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void theAgentsScrapePassesPromtool() throws Exception {
        Promtool promtool = Promtool.require();
        StateHolder state = new StateHolder(0);
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.allowFromB(), 1);
        QueueCounters queue = new QueueCounters(100, 1234, 5, 2, 128, 3, 1, 42);
        SyncStatus sync = new SyncStatus();
        ManagedChannel unused =
                NettyChannelBuilder.forAddress("127.0.0.1", 1).usePlaintext().build();
        // two verdict queues, as --queues 2 exports them: one labelled series per queue
        try (AgentMetrics metrics = new AgentMetrics(
                        sync, state, new int[] {100, 101}, q -> Optional.of(queue), Clock.systemUTC(), 10);
                MetricsEndpoint endpoint =
                        MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0), metrics.registry(), List.of());
                VerdictFeed feed = new VerdictFeed(16, state::generation);
                VerdictUplink uplink =
                        new VerdictUplink(unused, "node-1", feed, 10, metrics.registry(), Clock.systemUTC())) {
            PacketTuple allowed =
                    new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), 6, 80);
            PacketTuple denied =
                    new PacketTuple().set(IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.1"), 17, 53);
            PacketTuple open = new PacketTuple().set(IpAddress.parse("10.0.0.1"), IpAddress.parse("10.0.0.3"), 6, 443);
            for (PacketTuple p : List.of(allowed, denied, open)) {
                int code = state.decide(p);
                metrics.verdicts().decided(p.family, p.protocol, (code & 1) != 0, 3_000);
                metrics.policyVerdicts().record(state.current(), code);
            }
            metrics.nftApply().applied(true, 2_000_000, true);
            metrics.nftApply().applied(false, 1_000_000, false);
            metrics.applied(1, System.currentTimeMillis() * 1_000_000L - 20_000_000L);

            String scrape = scrape(endpoint.port());
            assertThat(scrape)
                    .contains(
                            "kubeverdict_policy_verdicts_total{direction=\"ingress\",policy=\"default/x/allow-from-b\","
                                    + "reason=\"rule\",verdict=\"allow\"} 1.0")
                    .contains("kubeverdict_policy_verdicts_total{direction=\"ingress\",policy=\"default\","
                            + "reason=\"tier_default\",verdict=\"deny\"} 1.0")
                    .contains("kubeverdict_policy_verdicts_total{direction=\"ingress\",policy=\"\","
                            + "reason=\"not_isolated\",verdict=\"allow\"} 1.0")
                    .contains("kubeverdict_nft_apply_seconds_count{operation=\"start\"} 1")
                    .contains("kubeverdict_nft_apply_failures_total{operation=\"update\"} 1.0")
                    .contains("kubeverdict_sync_programming_latency_seconds_bucket")
                    .contains("kubeverdict_packet_processing_seconds_bucket")
                    .contains("kubeverdict_observe_events_lost_total")
                    .contains("kubeverdict_verdict_feed_dropped_total");
            assertLint(promtool, scrape);
        } finally {
            unused.shutdownNow();
        }
    }

    private void assertLint(Promtool promtool, String scrape) throws Exception {
        Promtool.Result result = promtool.checkMetrics(scrape);
        assertThat(result.output()).as("promtool check metrics").isEmpty();
        assertThat(result.exitCode()).isZero();
        Map<String, Integer> buckets = new TreeMap<>();
        for (String line : scrape.split("\n")) {
            Matcher m = BUCKET.matcher(line);
            if (m.matches()) {
                String series = m.group(1) + "{" + m.group(2).replaceAll("le=\"[^\"]*\",?", "") + "}";
                buckets.merge(series, 1, Integer::sum);
            }
        }
        assertThat(buckets).isNotEmpty();
        buckets.forEach((series, n) -> assertThat(n).as("buckets of " + series).isLessThanOrEqualTo(MAX_BUCKETS));
    }

    /** Opens a Sync stream for the node, reads to InSync and reports it applied, as an agent does. */
    private static void syncOnce(ManagedChannel channel, String node) throws Exception {
        CountDownLatch inSync = new CountDownLatch(1);
        long[] sequence = new long[1];
        PolicySyncGrpc.newStub(channel)
                .sync(
                        SyncRequest.newBuilder()
                                .setNode(node)
                                .setAgentVersion("test")
                                .build(),
                        new StreamObserver<>() {
                            @Override
                            public void onNext(ToAgent value) {
                                if (value.hasInSync()) {
                                    sequence[0] = value.getSequence();
                                    inSync.countDown();
                                }
                            }

                            @Override
                            public void onError(Throwable t) {}

                            @Override
                            public void onCompleted() {}
                        });
        assertThat(inSync.await(30, TimeUnit.SECONDS)).isTrue();
        PolicySyncGrpc.newBlockingStub(channel)
                .reportApplied(AppliedReport.newBuilder()
                        .setNode(node)
                        .setAppliedSequence(sequence[0])
                        .build());
    }

    private String scrape(int port) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }
}
