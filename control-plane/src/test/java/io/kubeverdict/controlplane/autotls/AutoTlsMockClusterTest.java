// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.testing.tier.MockApiTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Auto TLS against the mock API server (CRUD): the first replica creates the Secret and the CA
 * ConfigMap, a second reuses them, an unusable Secret is replaced, and renewals — of the serving
 * certificate and of the CA — reach a running gRPC server's new connections, verified by clients
 * that trust exactly what the published ConfigMap says.
 */
@MockKubernetes
@MockApiTest
class AutoTlsMockClusterTest {
    private static final String NS = "kube-verdict";
    private static final List<String> NAMES = AutoTls.Settings.serviceNames("kube-verdict-control-plane", NS);
    /**
     * Short enough that the test's clock, moved ahead of the real one, stays within the 5 minutes
     * certificates are backdated: the clients check validity against the real clock.
     */
    private static final RenewalPlan.Lifetimes LIFETIMES = new RenewalPlan.Lifetimes(
            Duration.ofMinutes(4), Duration.ofMinutes(2), Duration.ofSeconds(30), Duration.ofMinutes(1));

    KubernetesClient client;

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final MutableClock clock = new MutableClock(Instant.now());

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    private AutoTls start() throws IOException {
        AutoTls.Settings settings = new AutoTls.Settings(
                NS,
                AutoTls.Settings.DEFAULT_SECRET,
                AutoTls.Settings.DEFAULT_CONFIG_MAP,
                NAMES,
                Duration.ofHours(1),
                Duration.ofMillis(100),
                LIFETIMES);
        AutoTls auto = AutoTls.start(client, settings, clock);
        open.add(auto);
        return auto;
    }

    private GrpcServer serve(AutoTls auto) throws Exception {
        GrpcServer server = GrpcServer.builder(new InetSocketAddress("127.0.0.1", 0))
                .tls(auto.serverTls())
                .build()
                .start();
        server.setServing(true);
        open.add(server::close);
        return server;
    }

    private Map<String, String> secretData() {
        return client.secrets()
                .inNamespace(NS)
                .withName(AutoTls.Settings.DEFAULT_SECRET)
                .get()
                .getData();
    }

    private String publishedBundle() {
        return client.configMaps()
                .inNamespace(NS)
                .withName(AutoTls.Settings.DEFAULT_CONFIG_MAP)
                .get()
                .getData()
                .get("ca.crt");
    }

    /** A fresh client (no TLS session to resume) that trusts exactly {@code bundlePem}, as an agent mounting it. */
    private ServingStatus healthTrusting(GrpcServer server, String bundlePem) throws Exception {
        Path bundle = Files.createTempFile(dir, "bundle", ".pem");
        Files.writeString(bundle, bundlePem);
        ManagedChannel c = ClientChannels.open(
                "127.0.0.1:" + server.port(),
                new ClientChannels.Tls(null, null, bundle, "kube-verdict-control-plane.kube-verdict.svc"));
        try {
            return HealthGrpc.newBlockingStub(c)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance())
                    .getStatus();
        } finally {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private ServingStatus healthTrustingWithin(GrpcServer server, String bundlePem) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return healthTrusting(server, bundlePem);
            } catch (StatusRuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    @Test
    void theFirstReplicaCreatesTheSecretAndBundleAndTheNextReusesThem() throws Exception {
        AutoTls first = start();
        GrpcServer server = serve(first);
        Map<String, String> created = secretData();
        assertThat(created).containsKeys("ca.crt", "ca.key", "tls.crt", "tls.key");
        assertThat(healthTrusting(server, publishedBundle())).isEqualTo(ServingStatus.SERVING);

        AutoTls second = start();
        assertThat(secretData()).isEqualTo(created);
        assertThat(healthTrusting(serve(second), publishedBundle())).isEqualTo(ServingStatus.SERVING);
        assertThat(Files.readString(second.serverTls().certChain()))
                .isEqualTo(Files.readString(first.serverTls().certChain()));
    }

    /**
     * Audit L8: the manifests ship both objects empty (no create in the Role). The first start
     * fills them, keeping what the installer put on them (kubectl's last-applied annotation, the
     * installer's labels, the type), and a later start reuses what it wrote.
     */
    @Test
    void theShippedEmptyObjectsAreFilledKeepingWhatTheInstallerPutOnThem() throws Exception {
        Map<String, String> installer = Map.of("app.kubernetes.io/managed-by", "kustomize");
        Map<String, String> applied = Map.of("kubectl.kubernetes.io/last-applied-configuration", "{}");
        client.secrets()
                .inNamespace(NS)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName(AutoTls.Settings.DEFAULT_SECRET)
                        .withNamespace(NS)
                        .withLabels(installer)
                        .withAnnotations(applied)
                        .endMetadata()
                        .withType("Opaque")
                        .build())
                .create();
        client.configMaps()
                .inNamespace(NS)
                .resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(AutoTls.Settings.DEFAULT_CONFIG_MAP)
                        .withNamespace(NS)
                        .withLabels(installer)
                        .withAnnotations(applied)
                        .endMetadata()
                        .build())
                .create();

        AutoTls first = start();
        assertThat(healthTrusting(serve(first), publishedBundle())).isEqualTo(ServingStatus.SERVING);
        Secret filled = client.secrets()
                .inNamespace(NS)
                .withName(AutoTls.Settings.DEFAULT_SECRET)
                .get();
        assertThat(filled.getData()).containsKeys("ca.crt", "ca.key", "tls.crt", "tls.key");
        assertThat(filled.getType()).isEqualTo("Opaque");
        ConfigMap bundle = client.configMaps()
                .inNamespace(NS)
                .withName(AutoTls.Settings.DEFAULT_CONFIG_MAP)
                .get();
        for (HasMetadata o : List.of(filled, bundle)) {
            assertThat(o.getMetadata().getLabels()).as(o.getKind()).containsAllEntriesOf(installer);
            assertThat(o.getMetadata().getAnnotations()).as(o.getKind()).containsAllEntriesOf(applied);
        }

        AutoTls second = start();
        assertThat(secretData()).isEqualTo(filled.getData());
        assertThat(Files.readString(second.serverTls().certChain()))
                .isEqualTo(Files.readString(first.serverTls().certChain()));
    }

    @Test
    void anUnusableSecretIsReplacedNeverServedAndNeverPlaintext() throws Exception {
        client.secrets()
                .inNamespace(NS)
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName(AutoTls.Settings.DEFAULT_SECRET)
                        .withNamespace(NS)
                        .endMetadata()
                        .withType("kubernetes.io/tls")
                        .addToStringData("tls.crt", "garbage")
                        .addToStringData("tls.key", "garbage")
                        .build())
                .create();
        AutoTls auto = start();
        assertThat(TlsMaterial.fromData(
                        new TlsObjects(client, NS, AutoTls.Settings.DEFAULT_SECRET, AutoTls.Settings.DEFAULT_CONFIG_MAP)
                                .readSecret()
                                .data()))
                .isNotNull();
        assertThat(healthTrusting(serve(auto), publishedBundle())).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void renewalsReachNewConnectionsOfARunningServer() throws Exception {
        AutoTls auto = start();
        GrpcServer server = serve(auto);
        String firstCert = secretData().get("tls.crt");
        String firstBundle = publishedBundle();

        // The serving certificate, with a third of its life left: same CA, new certificate.
        clock.advance(Duration.ofSeconds(45));
        auto.check();
        assertThat(secretData().get("tls.crt")).isNotEqualTo(firstCert);
        assertThat(publishedBundle()).isEqualTo(firstBundle);
        assertThat(healthTrustingWithin(server, firstBundle)).isEqualTo(ServingStatus.SERVING);

        // CA rotation, step 1: the next CA is published beside the old one; nothing it signs is served yet.
        clock.advance(Duration.ofSeconds(80));
        auto.check();
        String bothCas = publishedBundle();
        assertThat(bothCas).startsWith(firstBundle).isNotEqualTo(firstBundle);
        assertThat(healthTrusting(server, firstBundle)).isEqualTo(ServingStatus.SERVING);

        // Step 2, after the overlap: the new CA signs the served certificate. A client that trusts
        // only the new CA gets in; one that trusts only the old CA does not.
        clock.advance(Duration.ofSeconds(30));
        auto.check();
        String newCaOnly = bothCas.substring(firstBundle.length());
        assertThat(healthTrustingWithin(server, newCaOnly)).isEqualTo(ServingStatus.SERVING);
        assertThatThrownBy(() -> healthTrusting(server, firstBundle)).isInstanceOf(StatusRuntimeException.class);
        assertThat(publishedBundle())
                .as("the old CA stays trusted while other replicas may serve its certificate")
                .contains(firstBundle.strip());
    }
}
