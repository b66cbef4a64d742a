// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.auth.CallLimits;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.grpc.ServerLimits;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane under misuse, on real sockets: hundreds of silent and garbage connections,
 * an oversized message, more streams than one caller may hold, a flood of inspection calls. Each
 * is refused or closed, and meanwhile the health check says SERVING and a real agent stream keeps
 * receiving its node's changes. Attackers come from other loopback addresses than the agent, so
 * each is a caller of its own (plaintext: callers are told apart by address); loopback is
 * limited here like any address (the product exempts it: that is the operator's port-forward).
 */
class AbuseLimitsTest {
    /** Idle longer than the test: what closes the silent sockets is the handshake timeout. */
    private static final ServerLimits LIMITS = ServerLimits.defaults()
            .withMaxInboundMessageBytes(64 * 1024)
            .withTimeouts(Duration.ofSeconds(1), Duration.ofMinutes(1));

    private static final CallLimits.Config CALL_LIMITS = new CallLimits.Config(2, 5, 5, 100).limitingLoopback();

    private ControlPlane cp;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    private ManagedChannel channelFrom(String localAddress) throws IOException {
        InetAddress local = InetAddress.getByName(localAddress);
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
                    @Override
                    public SocketAddress createSocketAddress(SocketAddress remote, io.grpc.Attributes attrs) {
                        return new InetSocketAddress(local, 0);
                    }
                })
                .build();
        channels.add(c);
        return c;
    }

    private String metrics() throws IOException {
        try (InputStream in = URI.create("http://127.0.0.1:" + cp.metricsPort() + "/metrics")
                .toURL()
                .openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static double refused(String text, String reason) {
        return text.lines()
                .filter(l -> l.startsWith("kubeverdict_grpc_calls_refused_total{")
                        && l.contains("reason=\"" + reason + "\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    @Test
    void misuseIsRefusedWhileHealthStaysServingAndTheAgentKeepsItsStream(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), ControlPlaneManifestsTest.pod("a", "10.0.0.1"));
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        PolicySyncService.Options.defaults(),
                        new ControlPlane.Auth.None(),
                        LIMITS,
                        CALL_LIMITS,
                        null),
                new TestDoubleCalculator(),
                new ControlPlane.Source.Manifests(dir, new EngineDirectoryReader(), ControlPlaneManifestsTest.QUICK));
        ManagedChannel agentChannel = channelFrom("127.0.0.1");
        try (TestAgent agent = TestAgent.connect(agentChannel, "n1", true)) {
            agent.readUntilInSync();

            // 500 connections that never speak HTTP/2, 50 of them sending garbage.
            for (int i = 0; i < 500; i++) {
                Socket s = new Socket();
                s.bind(new InetSocketAddress("127.0.0.4", 0));
                s.connect(new InetSocketAddress("127.0.0.1", cp.grpcPort()));
                if (i % 10 == 0) {
                    OutputStream out = s.getOutputStream();
                    out.write("GET / HTTP/1.1\r\n\r\n\u0000\u00ff garbage".getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                }
                sockets.add(s);
            }

            ManagedChannel attacker = channelFrom("127.0.0.2");
            // A message over the limit is refused unread.
            String huge = "x".repeat(100 * 1024);
            assertThatThrownBy(() -> ControlPlaneInspectionGrpc.newBlockingStub(attacker)
                            .explain(ExplainRequest.newBuilder()
                                    .setFrom(huge)
                                    .setTo("x/a")
                                    .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));

            // Two streams per caller; the third is refused.
            try (TestAgent s1 = TestAgent.connect(attacker, "n1", true)) {
                s1.readUntilInSync();
                try (TestAgent s2 = TestAgent.connect(attacker, "n1", true)) {
                    s2.readUntilInSync();
                    try (TestAgent s3 = TestAgent.connect(attacker, "n1", true)) {
                        assertThat(s3.readUntilEnd().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    }
                }
            }

            // A flood of inspection calls from one caller: the burst passes, the rest is refused...
            var flooder = ControlPlaneInspectionGrpc.newBlockingStub(channelFrom("127.0.0.3"));
            int ok = 0;
            int limited = 0;
            for (int i = 0; i < 100; i++) {
                try {
                    flooder.listNodes(ListNodesRequest.getDefaultInstance());
                    ok++;
                } catch (StatusRuntimeException e) {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    limited++;
                }
            }
            assertThat(ok).isGreaterThanOrEqualTo(5);
            assertThat(limited).isPositive();
            // ...and nobody else is starved by it.
            assertThat(ControlPlaneInspectionGrpc.newBlockingStub(agentChannel)
                            .listNodes(ListNodesRequest.getDefaultInstance())
                            .getNodesList())
                    .isNotEmpty();
            assertThat(HealthGrpc.newBlockingStub(channelFrom("127.0.0.1"))
                            .check(HealthCheckRequest.getDefaultInstance())
                            .getStatus())
                    .isEqualTo(ServingStatus.SERVING);

            // The silent and garbage connections are closed by the server (handshake timeout).
            for (Socket s : sockets) {
                s.setSoTimeout(15_000);
                assertThat(readUntilClosed(s))
                        .as("connection from port %d closed by the server", s.getLocalPort())
                        .isTrue();
            }

            // The agent's stream still carries its node's changes.
            Files.writeString(dir.resolve("b.yaml"), ControlPlaneManifestsTest.pod("b", "10.0.0.2"));
            ToAgent next = agent.next();
            assertThat(next.getPayloadCase()).isEqualTo(ToAgent.PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
            assertThat(next.getWorkloadEndpointUpdate().getId().getPod()).isEqualTo("b");
        }
        String text = metrics();
        assertThat(refused(text, "rate_limited")).isPositive();
        assertThat(refused(text, "streams_per_caller")).isEqualTo(1);
    }

    /** Whether the peer closed (EOF or reset) before the socket's read timeout. */
    private static boolean readUntilClosed(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        try {
            while (in.read(buf) >= 0) {
                // whatever the server says (a GOAWAY) before it closes
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }
}
