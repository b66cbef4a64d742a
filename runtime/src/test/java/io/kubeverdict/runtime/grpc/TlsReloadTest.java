// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.kubeverdict.testing.pki.TestPki;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Certificates and CA bundles rotated under a running server and a running client, the way a
 * kubelet updates a mounted Secret or ConfigMap (a new directory, then one atomic rename of the
 * {@code ..data} link): the next connection of the same channel uses the new material, with no
 * restart on either side. A channel that does not re-read within the test shows the rotation
 * really needed the reload.
 */
class TlsReloadTest {
    private static final Duration QUICK = Duration.ofMillis(100);

    @TempDir
    Path dir;

    private GrpcServer server;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
    }

    /** A directory as the kubelet mounts one: FILE -> ..data/FILE, ..data -> ..VERSION. */
    private static final class Mounted {
        private final Path root;
        private int version;

        Mounted(Path root) throws IOException {
            this.root = Files.createDirectories(root);
        }

        Path file(String name) {
            return root.resolve(name);
        }

        /** Publishes the files (name -> content) as the next version. */
        void publish(String... nameAndContent) throws IOException {
            Path next = Files.createDirectory(root.resolve("..v" + (++version)));
            for (int i = 0; i < nameAndContent.length; i += 2) {
                Files.writeString(next.resolve(nameAndContent[i]), nameAndContent[i + 1]);
                Path link = root.resolve(nameAndContent[i]);
                if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(link, Path.of("..data", nameAndContent[i]));
                }
            }
            Path tmp = root.resolve("..data_tmp");
            Files.createSymbolicLink(tmp, next.getFileName());
            Files.move(
                    tmp, root.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static String read(Path p) throws IOException {
        return Files.readString(p);
    }

    private ServingStatus health(ManagedChannel channel) {
        channel.enterIdle(); // the next call makes a new connection: a new handshake
        return HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.getDefaultInstance())
                .getStatus();
    }

    private ServingStatus healthWithin(ManagedChannel channel, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            try {
                return health(channel);
            } catch (StatusRuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    private GrpcServer serve(int port, Mounted secret, boolean clientCertificates) throws IOException {
        GrpcServer s = GrpcServer.builder(new InetSocketAddress("127.0.0.1", port))
                .tls(new ServerTls(
                        secret.file("tls.crt"),
                        secret.file("tls.key"),
                        clientCertificates ? secret.file("ca.crt") : null,
                        QUICK))
                .build()
                .start();
        s.setServing(true);
        return s;
    }

    private ManagedChannel client(int port, Path cert, Path key, Path ca, Duration reloadEvery) throws IOException {
        ManagedChannel c = ClientChannels.open(
                "127.0.0.1:" + port, new ClientChannels.Tls(cert, key, ca, "localhost", reloadEvery));
        channels.add(c);
        return c;
    }

    @Test
    void aRunningServerPresentsItsRenewedCertificateToNewConnections() throws Exception {
        TestPki oldCa = new TestPki(Files.createDirectories(dir.resolve("old")), "old");
        TestPki newCa = new TestPki(Files.createDirectories(dir.resolve("new")), "new");
        TestPki.Issued oldServer = oldCa.leaf("server", "control-plane", "localhost");
        TestPki.Issued newServer = newCa.leaf("server", "control-plane", "localhost");
        Mounted secret = new Mounted(dir.resolve("server-secret"));
        secret.publish("tls.crt", read(oldServer.cert()), "tls.key", read(oldServer.key()));
        server = serve(0, secret, false);
        assertThat(health(client(server.port(), null, null, oldCa.caFile, QUICK)))
                .isEqualTo(ServingStatus.SERVING);

        secret.publish("tls.crt", read(newServer.cert()), "tls.key", read(newServer.key()));
        // A client that knows only the new CA gets in once the server has re-read its files...
        assertThat(healthWithin(client(server.port(), null, null, newCa.caFile, QUICK), Duration.ofSeconds(10)))
                .isEqualTo(ServingStatus.SERVING);
        // ...and one that knows only the old CA no longer does.
        assertThatThrownBy(() -> health(client(server.port(), null, null, oldCa.caFile, QUICK)))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void aRunningClientTrustsARotatedCaBundleAndPresentsItsRenewedCertificate() throws Exception {
        TestPki oldCa = new TestPki(Files.createDirectories(dir.resolve("old")), "old");
        TestPki newCa = new TestPki(Files.createDirectories(dir.resolve("new")), "new");
        TestPki.Issued oldServer = oldCa.leaf("server", "control-plane", "localhost");
        TestPki.Issued newServer = newCa.leaf("server", "control-plane", "localhost");
        TestPki.Issued oldClient = oldCa.leaf("client", "system:node:n1");
        TestPki.Issued newClient = newCa.leaf("client", "system:node:n1");

        Mounted oldSecret = new Mounted(dir.resolve("old-secret"));
        oldSecret.publish(
                "tls.crt", read(oldServer.cert()), "tls.key", read(oldServer.key()), "ca.crt", read(oldCa.caFile));
        Mounted agentFiles = new Mounted(dir.resolve("agent"));
        agentFiles.publish(
                "tls.crt", read(oldClient.cert()), "tls.key", read(oldClient.key()), "ca.crt", read(oldCa.caFile));
        server = serve(0, oldSecret, true);
        int port = server.port();
        ManagedChannel agent =
                client(port, agentFiles.file("tls.crt"), agentFiles.file("tls.key"), agentFiles.file("ca.crt"), QUICK);
        ManagedChannel stale = client(
                port,
                agentFiles.file("tls.crt"),
                agentFiles.file("tls.key"),
                agentFiles.file("ca.crt"),
                Duration.ofHours(1));
        assertThat(health(agent)).isEqualTo(ServingStatus.SERVING);
        assertThat(health(stale)).isEqualTo(ServingStatus.SERVING);

        // Everything moves to the new CA: the agent's bundle and certificate, and a control plane
        // (a new server on the same port, so no TLS session of the old one can be resumed) whose
        // certificate and client CA are the new CA's only.
        agentFiles.publish(
                "tls.crt", read(newClient.cert()), "tls.key", read(newClient.key()), "ca.crt", read(newCa.caFile));
        server.close();
        Mounted newSecret = new Mounted(dir.resolve("new-secret"));
        newSecret.publish(
                "tls.crt", read(newServer.cert()), "tls.key", read(newServer.key()), "ca.crt", read(newCa.caFile));
        server = serve(port, newSecret, true);

        assertThat(healthWithin(agent, Duration.ofSeconds(10))).isEqualTo(ServingStatus.SERVING);
        // The channel that still holds what it read at start cannot connect: it needed the reload.
        assertThatThrownBy(() -> health(stale))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    }

    @Test
    void aBrokenFileKeepsTheLastGoodMaterial() throws Exception {
        TestPki ca = new TestPki(Files.createDirectories(dir.resolve("ca")), "ca");
        TestPki.Issued cert = ca.leaf("server", "control-plane", "localhost");
        Mounted serverSecret = new Mounted(dir.resolve("server-secret"));
        serverSecret.publish("tls.crt", read(cert.cert()), "tls.key", read(cert.key()));
        server = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .tls(new ServerTls(serverSecret.file("tls.crt"), serverSecret.file("tls.key"), null, QUICK))
                .build()
                .start();
        server.setServing(true);
        ManagedChannel client = ClientChannels.open(
                "127.0.0.1:" + server.port(), new ClientChannels.Tls(null, null, ca.caFile, "localhost", QUICK));
        channels.add(client);
        assertThat(health(client)).isEqualTo(ServingStatus.SERVING);

        serverSecret.publish("tls.crt", "-----BEGIN CERTIFICATE-----\nnot base64\n", "tls.key", "garbage");
        Thread.sleep(4 * QUICK.toMillis());
        assertThat(health(client)).isEqualTo(ServingStatus.SERVING);

        // A renewed certificate published with another certificate's key would fail every handshake.
        TestPki.Issued other = ca.leaf("other", "control-plane", "localhost");
        serverSecret.publish("tls.crt", read(cert.cert()), "tls.key", read(other.key()));
        Thread.sleep(4 * QUICK.toMillis());
        assertThat(health(client)).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void unusableFilesAtStartAreRefusedNamingThem() throws Exception {
        Path cert = Files.writeString(dir.resolve("tls.crt"), "garbage");
        Path key = Files.writeString(dir.resolve("tls.key"), "garbage");
        assertThatThrownBy(() -> GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                        .tls(new ServerTls(cert, key, null))
                        .build())
                .isInstanceOf(IOException.class)
                .hasMessageContaining(cert.toString());
    }
}
