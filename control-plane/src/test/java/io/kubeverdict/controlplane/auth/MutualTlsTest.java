// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.BindableService;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.testing.pki.TestPki;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MutualTlsTest {
    @TempDir
    Path dir;

    private TestPki pki;
    private GrpcServer endpoint;
    private PolicySyncService sync;
    private ExecutorService executor;
    private ManagedChannel channel;

    @BeforeEach
    void setUp() throws Exception {
        pki = new TestPki(dir, "kube-verdict-test");
        Path[] server = pki.issue("server", "kube-verdict-control-plane", "localhost");
        SnapshotHub hub = new SnapshotHub();
        hub.markReady();
        executor = Executors.newFixedThreadPool(2);
        sync = new PolicySyncService(
                hub,
                new ControlPlaneMetrics(new SimpleMeterRegistry()),
                NodeAuthorizer.requireNodeCertificate(),
                executor,
                PolicySyncService.Options.defaults());
        endpoint = GrpcEndpoint.create(
                        new InetSocketAddress("127.0.0.1", 0),
                        new ServerTls(server[0], server[1], pki.caFile),
                        List.<BindableService>of(sync))
                .start();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        endpoint.close();
        sync.close();
        executor.shutdownNow();
    }

    private ManagedChannel channel(ChannelCredentials creds) {
        channel = NettyChannelBuilder.forAddress("localhost", endpoint.port(), creds)
                .build();
        return channel;
    }

    private ChannelCredentials clientCert(String file, String cn, String... dns) throws Exception {
        Path[] c = pki.issue(file, cn, dns);
        return TlsChannelCredentials.newBuilder()
                .keyManager(c[0].toFile(), c[1].toFile())
                .trustManager(pki.caFile.toFile())
                .build();
    }

    private static ToAgent firstMessage(ManagedChannel ch, String node) {
        Iterator<ToAgent> it = PolicySyncGrpc.newBlockingStub(ch)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .sync(SyncRequest.newBuilder().setNode(node).build());
        return it.next();
    }

    @Test
    void nodeCertificateGetsItsOwnStream() throws Exception {
        ManagedChannel ch = channel(clientCert("n1", "system:node:n1"));
        assertThat(firstMessage(ch, "n1").hasInSync()).isTrue();
    }

    @Test
    void dnsSanNamingTheNodeIsAcceptedToo() throws Exception {
        ManagedChannel ch = channel(clientCert("agent-n3", "kube-verdict-agent", "n3"));
        assertThat(firstMessage(ch, "n3").hasInSync()).isTrue();
    }

    @Test
    void certificateOfNodeAAskingForNodeBIsDenied() throws Exception {
        ManagedChannel ch = channel(clientCert("n1", "system:node:n1"));
        assertThatThrownBy(() -> firstMessage(ch, "n2"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThatThrownBy(() -> PolicySyncGrpc.newBlockingStub(ch)
                        .reportApplied(AppliedReport.newBuilder()
                                .setNode("n2")
                                .setAppliedSequence(1)
                                .build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }

    @Test
    void clientWithoutCertificateIsRefusedAtHandshake() throws Exception {
        ManagedChannel ch = channel(TlsChannelCredentials.newBuilder()
                .trustManager(pki.caFile.toFile())
                .build());
        assertThatThrownBy(() -> firstMessage(ch, "n1"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void certificateFromAnotherCaIsRefused() throws Exception {
        TestPki other = new TestPki(dir, "rogue");
        Path[] c = other.issue("rogue-n1", "system:node:n1");
        ManagedChannel ch = channel(TlsChannelCredentials.newBuilder()
                .keyManager(c[0].toFile(), c[1].toFile())
                .trustManager(pki.caFile.toFile())
                .build());
        assertThatThrownBy(() -> firstMessage(ch, "n1"))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }
}
