// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsServerCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.services.HealthStatusManager;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.testing.pki.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sync client over (mutual) TLS, with certificates made for the test, and with its token. */
class ControlPlaneChannelTest {
    private static final Backoff FAST = new Backoff(Duration.ofMillis(50), Duration.ofMillis(200), 2.0);

    @Test
    void syncsOverMutualTlsAndIsRefusedWithAForeignCertificate(@TempDir Path dir) throws Exception {
        TestPki pki = new TestPki(dir, "cluster");
        Path ca = pki.caFile;
        TestPki.Issued server0 = pki.leaf("server", "kube-verdict-control-plane", "control-plane.test");
        Path serverCert = server0.cert();
        TestPki.Issued node = pki.leaf("node", "system:node:node-1", "node-1");
        Path nodeCert = node.cert();
        TestPki.Issued rogueNode = new TestPki(dir, "rogue").leaf("rogue-node", "system:node:node-1", "node-1");
        Path rogueCert = rogueNode.cert();

        TlsServerCredentials.Builder server = TlsServerCredentials.newBuilder()
                .keyManager(serverCert.toFile(), server0.key().toFile())
                .trustManager(ca.toFile())
                .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
        try (ScriptedControlPlane cp = ScriptedControlPlane.withCredentials(server.build())) {
            // Our node's certificate, the cluster CA, and the server's name checked against its certificate.
            ManagedChannel channel = ControlPlaneChannel.open(
                    cp.target(), new ControlPlaneChannel.Tls(nodeCert, node.key(), ca, "control-plane.test"));
            BlockingQueue<NodeSnapshot> applied = new LinkedBlockingQueue<>();
            try (SyncClient client = new SyncClient(
                            channel,
                            SyncRequest.newBuilder().setNode("node-1").build(),
                            () -> new SnapshotAssembler("node-1"),
                            (s, seq) -> applied.add(s),
                            (seq, t) -> {},
                            FAST,
                            () -> 0.5,
                            new SyncStatus())
                    .start()) {
                cp.nextStream().send(endpoint(1, "x", "a", "10.0.0.1"), inSync(2));
                NodeSnapshot snapshot = applied.poll(10, TimeUnit.SECONDS);
                assertThat(snapshot).isNotNull();
                assertThat(snapshot.getEndpointsCount()).isEqualTo(1);
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }

            // A certificate from another CA never gets a stream.
            ManagedChannel rogue = ControlPlaneChannel.open(
                    cp.target(), new ControlPlaneChannel.Tls(rogueCert, rogueNode.key(), ca, "control-plane.test"));
            SyncStatus status = new SyncStatus();
            try (SyncClient client = new SyncClient(
                            rogue,
                            SyncRequest.newBuilder().setNode("node-1").build(),
                            () -> new SnapshotAssembler("node-1"),
                            (s, seq) -> applied.add(s),
                            (seq, t) -> {},
                            FAST,
                            () -> 0.5,
                            status)
                    .start()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (status.reconnects() < 2 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(status.reconnects())
                        .as("handshakes refused, retried")
                        .isGreaterThanOrEqualTo(2);
                assertThat(cp.pollStream(200)).isNull();
                assertThat(status.connected()).isFalse();
            } finally {
                rogue.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void sendsTheTokenFileAsReadAtEachCallOverServerOnlyTls(@TempDir Path dir) throws Exception {
        TestPki pki = new TestPki(dir, "cluster");
        TestPki.Issued serverPair = pki.leaf("server", "kube-verdict-control-plane", "control-plane.test");
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        Metadata.Key<String> authorization = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
        HealthStatusManager health = new HealthStatusManager();
        Server server = Grpc.newServerBuilderForPort(
                        0,
                        TlsServerCredentials.newBuilder()
                                .keyManager(
                                        serverPair.cert().toFile(),
                                        serverPair.key().toFile())
                                .build())
                .addService(ServerInterceptors.intercept(health.getHealthService(), new ServerInterceptor() {
                    @Override
                    public <Q, R> ServerCall.Listener<Q> interceptCall(
                            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                        seen.add(String.valueOf(headers.get(authorization)));
                        return next.startCall(call, headers);
                    }
                }))
                .build()
                .start();
        Path token = dir.resolve("token");
        Files.writeString(token, "first-token\n");
        ManagedChannel channel = ControlPlaneChannel.open(
                "127.0.0.1:" + server.getPort(),
                new ControlPlaneChannel.Tls(null, null, pki.caFile, "control-plane.test"),
                token);
        try {
            HealthGrpc.HealthBlockingStub stub =
                    HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
            stub.check(HealthCheckRequest.getDefaultInstance());
            assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo("Bearer first-token");
            Files.writeString(token, "rotated-token"); // the kubelet rewrote it
            HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance());
            assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo("Bearer rotated-token");
            Files.delete(token);
            assertThatThrownBy(() -> HealthGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.getDefaultInstance()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
                        assertThat(e.getStatus().getDescription()).contains(token.toString());
                    });
            assertThat(seen.poll(200, TimeUnit.MILLISECONDS))
                    .as("no call without identity")
                    .isNull();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
