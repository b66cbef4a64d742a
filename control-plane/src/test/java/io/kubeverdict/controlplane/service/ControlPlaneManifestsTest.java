// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.manifests.BadManifests;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.source.ManifestDirectorySource;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The service on a manifest directory, with a real gRPC client: a directory that cannot be read
 * whole publishes nothing at start and changes nothing after a good load; health, /readyz and the
 * load metrics say so until it loads again; a dead thread makes the service fail.
 */
class ControlPlaneManifestsTest {
    static final ManifestDirectorySource.Timing QUICK =
            new ManifestDirectorySource.Timing(Duration.ofMillis(20), Duration.ofSeconds(60), Duration.ofMillis(20));

    private ControlPlane cp;
    private ManagedChannel channel;

    static String pod(String name, String ip) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: %s}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: %s}
                """.formatted(name, ip);
    }

    static final String POLICY = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: x, name: deny-all}
            spec: {podSelector: {}}
            """;

    static final String POLICY_JSON = """
            {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
             "metadata": {"namespace": "x", "name": "deny-all"}, "spec": {"podSelector": {}}}
            """;

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    private void start(Path dir, TestDoubleCalculator calc) throws Exception {
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        PolicySyncService.Options.defaults()),
                calc,
                new ControlPlane.Source.Manifests(dir, new EngineDirectoryReader(BadManifests.SMALL_LIMITS), QUICK));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
    }

    private ServingStatus health() {
        return HealthGrpc.newBlockingStub(channel)
                .check(HealthCheckRequest.getDefaultInstance())
                .getStatus();
    }

    private int readyz() throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + cp.metricsPort() + "/readyz")
                .toURL()
                .openConnection();
        try {
            return c.getResponseCode();
        } finally {
            c.disconnect();
        }
    }

    private double metric(String name) throws IOException {
        String text;
        try (var in = URI.create("http://127.0.0.1:" + cp.metricsPort() + "/metrics")
                .toURL()
                .openStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return text.lines()
                .filter(l -> l.startsWith(name + " "))
                .mapToDouble(l -> Double.parseDouble(l.split(" ")[1]))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " not exported"));
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    private static String policyFor(String file) {
        return file.endsWith(".json") ? POLICY_JSON : POLICY;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#all")
    void atStartABadDirectoryPublishesNothingUntilItLoads(BadManifests.Case bad, @TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("a", "10.0.0.1"));
        Files.write(dir.resolve(bad.file()), bad.content());
        start(dir, new TestDoubleCalculator());
        // The first load is tried before start returns.
        assertThat(cp.notReadyReason())
                .startsWith("manifest load rejected: " + bad.where())
                .contains(bad.says());
        assertThat(cp.hub().isReady()).isFalse();
        assertThat(cp.hub().all()).isEmpty();
        assertThat(health()).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(readyz()).isEqualTo(503);
        assertThat(metric("kubeverdict_manifest_load_ok")).isZero();
        assertThat(metric("kubeverdict_manifest_load_errors_total")).isEqualTo(1);
        assertThat(metric("kubeverdict_manifest_last_success_timestamp_seconds"))
                .isZero();
        assertThat(ControlPlaneInspectionGrpc.newBlockingStub(channel)
                        .listNodes(ListNodesRequest.getDefaultInstance())
                        .getNodesList())
                .isEmpty();

        try (TestAgent agent = TestAgent.connect(channel, "n1", true)) {
            Files.delete(dir.resolve(bad.file()));
            agent.readUntilInSync(); // the first message comes only from the first good load
            assertThat(agent.state("n1").getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("a");
        }
        await(() -> health() == ServingStatus.SERVING, "SERVING");
        assertThat(readyz()).isEqualTo(200);
        assertThat(metric("kubeverdict_manifest_load_ok")).isEqualTo(1);
        assertThat(metric("kubeverdict_manifest_load_errors_total")).isEqualTo(1);
        assertThat(metric("kubeverdict_manifest_last_success_timestamp_seconds"))
                .isPositive();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#all")
    void afterAGoodLoadABadDirectoryChangesNothingUntilItLoads(BadManifests.Case bad, @TempDir Path dir)
            throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("a", "10.0.0.1"));
        Files.writeString(dir.resolve(bad.file()), policyFor(bad.file()));
        start(dir, new TestDoubleCalculator());
        try (TestAgent agent = TestAgent.connect(channel, "n1", true)) {
            agent.readUntilInSync();
            assertThat(health()).isEqualTo(ServingStatus.SERVING);

            // A bad file, then a new pod: whichever load sees the pod sees the bad file too.
            Files.write(dir.resolve(bad.file()), bad.content());
            Files.writeString(dir.resolve("b.yaml"), pod("b", "10.0.0.2"));
            await(() -> !cp.ready(), "readiness off");
            assertThat(cp.notReadyReason())
                    .startsWith("manifest load rejected: " + bad.where())
                    .contains(bad.says());
            assertThat(health()).isEqualTo(ServingStatus.NOT_SERVING);
            assertThat(readyz()).isEqualTo(503);
            assertThat(metric("kubeverdict_manifest_load_ok")).isZero();
            assertThat(metric("kubeverdict_manifest_load_errors_total")).isEqualTo(1);
            assertThat(cp.hub().current("n1").snapshot().getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("a");

            // Fixed: the agent's open stream gets exactly what the good directory adds.
            Files.writeString(dir.resolve(bad.file()), policyFor(bad.file()));
            ToAgent next = agent.next();
            assertThat(next.getPayloadCase()).isEqualTo(PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
            assertThat(next.getWorkloadEndpointUpdate().getId().getPod()).isEqualTo("b");
            await(() -> health() == ServingStatus.SERVING, "SERVING again");
            assertThat(readyz()).isEqualTo(200);
            assertThat(metric("kubeverdict_manifest_load_ok")).isEqualTo(1);
        }
    }

    @Test
    void aNodeTheClusterDoesNotHaveIsRefusedOnceTheFirstCalculationIsPublished(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("a", "10.0.0.1") + """
                ---
                apiVersion: v1
                kind: Node
                metadata: {name: idle}
                """);
        start(dir, new TestDoubleCalculator());
        await(() -> health() == ServingStatus.SERVING, "SERVING");
        try (TestAgent typo = TestAgent.connect(channel, "nl", true);
                TestAgent idle = TestAgent.connect(channel, "idle", true);
                TestAgent placed = TestAgent.connect(channel, "n1", true)) {
            Status refused = typo.readUntilEnd();
            assertThat(refused.getCode()).isEqualTo(Status.Code.NOT_FOUND);
            assertThat(refused.getDescription()).contains("'nl'").contains("not in the cluster");
            idle.readUntilInSync(); // a Node object without pods: an empty snapshot
            assertThat(idle.state("idle").getEndpointsCount()).isZero();
            placed.readUntilInSync(); // no Node object, but a pod is placed on it
            assertThat(placed.state("n1").getEndpointsCount()).isEqualTo(1);
        }
        assertThat(ControlPlaneInspectionGrpc.newBlockingStub(channel)
                        .listNodes(ListNodesRequest.getDefaultInstance())
                        .getNodesList())
                .extracting(n -> n.getNode())
                .doesNotContain("nl");
    }

    @Test
    void aDirectoryThatDoesNotExistYetIsWaitedFor(@TempDir Path parent) throws Exception {
        Path dir = parent.resolve("later");
        start(dir, new TestDoubleCalculator());
        assertThat(cp.notReadyReason()).contains("does not exist");
        assertThat(health()).isEqualTo(ServingStatus.NOT_SERVING);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("a.yaml"), pod("a", "10.0.0.1"));
        await(() -> health() == ServingStatus.SERVING, "SERVING once the directory exists");
        assertThat(cp.hub().current("n1").snapshot().getEndpointsCount()).isEqualTo(1);
    }

    @Test
    void aDeadCalculationThreadFailsTheService(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), pod("a", "10.0.0.1"));
        TestDoubleCalculator calc = new TestDoubleCalculator() {
            @Override
            public void upsertPod(Pod pod) {
                if (pod.getMetadata().getName().equals("boom")) {
                    throw new StackOverflowError("a calculation gone wrong");
                }
                super.upsertPod(pod);
            }
        };
        start(dir, calc);
        cp.firstCalculation().get(30, TimeUnit.SECONDS);
        assertThat(cp.failed()).isNotDone();
        Files.writeString(dir.resolve("b.yaml"), pod("boom", "10.0.0.2"));
        assertThat(cp.failed().get(30, TimeUnit.SECONDS)).isInstanceOf(StackOverflowError.class);
        assertThat(health()).isEqualTo(ServingStatus.NOT_SERVING);
        assertThat(readyz()).isEqualTo(503);
        assertThat(cp.notReadyReason()).startsWith("the calculation thread died");
    }
}
