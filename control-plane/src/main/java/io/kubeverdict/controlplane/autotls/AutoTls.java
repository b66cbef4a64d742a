// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kubeverdict.runtime.FatalThreads;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.runtime.grpc.TlsFileReloads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS with no manual steps: the control plane keeps its own CA and serving certificate in a Secret
 * of its namespace (the manifests ship it empty; the first replica fills it, the others and restarts
 * reuse it), publishes the CA bundle in a ConfigMap (shipped empty too) that the agent DaemonSet mounts, and renews both before they expire
 * ({@link RenewalPlan}). The serving material is written to files of this process that
 * {@link ServerTls} watches, so a renewal reaches new connections without a restart and open
 * streams are not touched.
 *
 * <p>Fails closed: at start nothing is served until the material is good (an API error stops the
 * start, never a fallback to plaintext). A stored Secret that cannot be used (bad PEM, a key that
 * is not its certificate's, a serving certificate its CA did not sign) is reported with the
 * object's name and replaced. Later, each check re-reads the Secret (so replicas follow the one
 * that renewed); a failed check is logged and retried at the next, the files keep the last good
 * material.
 */
public final class AutoTls implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AutoTls.class);
    private static final int CONFLICT = 409;
    private static final int MAX_TRIES = 5;

    /**
     * @param checkEvery how often the Secret is looked at (renewals and other replicas' changes)
     * @param fileReload how often the server looks at the files written here
     */
    public record Settings(
            String namespace,
            String secretName,
            String configMapName,
            List<String> dnsNames,
            Duration checkEvery,
            Duration fileReload,
            RenewalPlan.Lifetimes lifetimes) {
        public static final String DEFAULT_SECRET = "kube-verdict-auto-tls";
        public static final String DEFAULT_CONFIG_MAP = "kube-verdict-ca";

        public static Settings defaults(String namespace, List<String> dnsNames) {
            return new Settings(
                    namespace,
                    DEFAULT_SECRET,
                    DEFAULT_CONFIG_MAP,
                    dnsNames,
                    Duration.ofMinutes(5),
                    TlsFileReloads.DEFAULT_PERIOD,
                    RenewalPlan.Lifetimes.defaults());
        }

        public Settings withObjects(String secret, String configMap) {
            return new Settings(namespace, secret, configMap, dnsNames, checkEvery, fileReload, lifetimes);
        }

        /** The control plane Service's names in a namespace, as agents and the CLI dial it. */
        public static List<String> serviceNames(String service, String namespace) {
            return List.of(
                    service + "." + namespace + ".svc",
                    service,
                    service + "." + namespace,
                    service + "." + namespace + ".svc.cluster.local");
        }
    }

    private final TlsObjects objects;
    private final RenewalPlan plan;
    private final Clock clock;
    private final Path dir;
    private final ServerTls serverTls;
    private final ScheduledExecutorService checker;

    private AutoTls(KubernetesClient client, Settings settings, Clock clock) throws IOException {
        this.objects = new TlsObjects(client, settings.namespace(), settings.secretName(), settings.configMapName());
        this.plan = new RenewalPlan(settings.dnsNames(), settings.lifetimes());
        this.clock = clock;
        this.dir = Files.createTempDirectory(
                "kube-verdict-tls", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        this.serverTls = new ServerTls(dir.resolve("tls.crt"), dir.resolve("tls.key"), null, settings.fileReload());
        this.checker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "auto-tls");
            t.setDaemon(true);
            return t;
        });
    }

    /** Settles the Secret, the ConfigMap and the files before returning; then checks every period. */
    public static AutoTls start(KubernetesClient client, Settings settings, Clock clock) throws IOException {
        AutoTls auto = new AutoTls(client, settings, clock);
        try {
            auto.check();
        } catch (IOException | RuntimeException e) {
            auto.close();
            throw new IOException("auto TLS: " + e.getMessage(), e);
        }
        auto.checker.scheduleWithFixedDelay(
                FatalThreads.guard(auto::checkAndLog),
                settings.checkEvery().toMillis(),
                settings.checkEvery().toMillis(),
                TimeUnit.MILLISECONDS);
        log.info(
                "auto TLS: serving the certificate of {}; agents trust the CA bundle of {}",
                auto.objects.secretPlace(),
                auto.objects.configMapPlace());
        return auto;
    }

    /** What the gRPC server serves: files this process keeps up to date. */
    public ServerTls serverTls() {
        return serverTls;
    }

    /** The CA bundle agents trust, as a file kept up to date (other replicas' servers are trusted by it). */
    public Path caBundle() {
        return dir.resolve("ca.crt");
    }

    private void checkAndLog() {
        try {
            check();
        } catch (IOException | RuntimeException e) {
            log.warn(
                    "auto TLS: checking {} failed ({}); serving the last good certificate, retrying at the next check",
                    objects.secretPlace(),
                    e.getMessage());
        }
    }

    /** One pass: read, renew what is due (optimistically locked), publish the bundle, write the files. */
    void check() throws IOException {
        for (int attempt = 1; attempt <= MAX_TRIES; attempt++) {
            TlsObjects.Stored stored = objects.readSecret();
            TlsMaterial current = null;
            if (stored != null && stored.empty()) {
                log.info("auto TLS: {} is empty (as installed): making a CA and certificate", objects.secretPlace());
            } else if (stored != null) {
                try {
                    current = TlsMaterial.fromData(stored.data());
                } catch (IOException unusable) {
                    log.error(
                            "auto TLS: {} cannot be used ({}); replacing it with a new CA and certificate",
                            objects.secretPlace(),
                            unusable.getMessage());
                }
            }
            TlsMaterial wanted = plan.plan(current, clock.instant());
            if (wanted != current) {
                try {
                    objects.writeSecret(wanted.toData(), stored);
                } catch (KubernetesClientException e) {
                    if (e.getCode() == CONFLICT) {
                        continue; // another replica wrote first: use what it wrote
                    }
                    throw e;
                }
                log.info(
                        "auto TLS: {} {} (CA valid until {}, serving certificate until {}{})",
                        objects.secretPlace(),
                        stored == null
                                ? "created"
                                : stored.empty() ? "filled" : current == null ? "replaced" : "renewed",
                        wanted.ca().notAfter(),
                        wanted.serving().notAfter(),
                        wanted.next() == null
                                ? ""
                                : "; next CA trusted, signing from "
                                        + wanted.next().notBefore().plus(CertificateIssuer.BACKDATE));
            }
            publish(wanted);
            return;
        }
        throw new IOException(objects.secretPlace() + " kept changing under " + MAX_TRIES + " tries");
    }

    /** The bundle first (agents trust a new CA before anything it signs is served), then the files. */
    private void publish(TlsMaterial material) throws IOException {
        String bundle = material.bundlePem();
        ConfigMap read = objects.readConfigMap();
        if (!bundle.equals(TlsObjects.bundleOf(read))) {
            objects.writeBundle(bundle, read);
            log.info(
                    "auto TLS: published {} CA certificate(s) in {}",
                    material.trusted().size(),
                    objects.configMapPlace());
        }
        writeIfChanged(caBundle(), bundle);
        writeIfChanged(serverTls.privateKey(), Pem.of(material.serving().key()));
        writeIfChanged(serverTls.certChain(), Pem.of(material.serving().certificate()));
    }

    private static void writeIfChanged(Path file, String content) throws IOException {
        if (Files.exists(file) && Objects.equals(Files.readString(file), content)) {
            return;
        }
        Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void close() {
        checker.shutdownNow();
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            log.debug("auto TLS: could not remove {}: {}", dir, e.getMessage());
        }
    }
}
