// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.CertificateUtils;
import io.kubeverdict.runtime.FatalThreads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Key and trust material from PEM files that are re-read while in use (into grpc-util's
 * AdvancedTls managers, which swap what the next handshake uses): a certificate renewed by
 * cert-manager or the control plane, or a CA bundle ConfigMap the kubelet swapped, is used by the
 * next connection without a restart; connections already open keep theirs. The first read happens
 * here and fails loudly, naming the file (nothing is served without it). Later, files are looked
 * at every period (one daemon thread per process) and read only when they changed (modification
 * time, size or the file behind a link); what cannot be used — unparsable PEM, a key that does not
 * belong to the certificate — is logged once per change with the file, and the last good material
 * stays. {@link #close} stops this instance's re-reads.
 */
public final class TlsFileReloads implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TlsFileReloads.class);
    /** How often files are looked at: a kubelet propagates a Secret or ConfigMap in about a minute. */
    public static final Duration DEFAULT_PERIOD = Duration.ofSeconds(30);

    private static ScheduledExecutorService reloader;

    private final Duration period;
    private final List<ScheduledFuture<?>> reloads = new ArrayList<>();

    public TlsFileReloads(Duration period) {
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("the TLS reload period must be positive");
        }
        this.period = period;
    }

    private static synchronized ScheduledExecutorService reloader() {
        if (reloader == null) {
            reloader = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "tls-reload");
                t.setDaemon(true);
                return t;
            });
        }
        return reloader;
    }

    /** Our certificate chain and key (PKCS#8), re-read when they change. */
    public AdvancedTlsX509KeyManager keyManager(Path certChain, Path privateKey) throws IOException {
        AdvancedTlsX509KeyManager manager = new AdvancedTlsX509KeyManager();
        watch(
                () -> {
                    X509Certificate[] chain = certificates(certChain);
                    PrivateKey key = privateKey(privateKey);
                    checkPair(chain[0], key, certChain, privateKey);
                    manager.updateIdentityCredentials(chain, key);
                },
                "certificate " + certChain + " and key " + privateKey,
                certChain,
                privateKey);
        return manager;
    }

    /** The CAs of a PEM bundle (one or more certificates), re-read when it changes. */
    public AdvancedTlsX509TrustManager trustManager(Path caBundle) throws IOException {
        AdvancedTlsX509TrustManager manager;
        try {
            manager = AdvancedTlsX509TrustManager.newBuilder()
                    .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION)
                    .build();
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot make a trust manager: " + e.getMessage(), e);
        }
        watch(
                () -> {
                    try {
                        manager.updateTrustCredentials(certificates(caBundle));
                    } catch (GeneralSecurityException e) {
                        throw new IOException(e.getMessage(), e);
                    }
                },
                "CA bundle " + caBundle,
                caBundle);
        return manager;
    }

    private interface Load {
        void run() throws IOException;
    }

    /** Loads now (an error is thrown), then again on the reloader whenever the files change. */
    private void watch(Load load, String what, Path... files) throws IOException {
        Object[] loaded = {stamp(files)};
        try {
            load.run();
        } catch (IOException e) {
            throw new IOException("cannot use the " + what + ": " + e.getMessage(), e);
        }
        reloads.add(reloader()
                .scheduleWithFixedDelay(
                        FatalThreads.guard(() -> {
                            try {
                                List<Object> now = stamp(files);
                                if (now.equals(loaded[0])) {
                                    return;
                                }
                                loaded[0] = now; // one attempt (and one log line) per change
                                load.run();
                                log.info("TLS: reloaded the {}", what);
                            } catch (IOException | RuntimeException e) {
                                log.warn(
                                        "TLS: cannot use the changed {} ({}); keeping the material loaded before",
                                        what,
                                        e.getMessage());
                            }
                        }),
                        period.toMillis(),
                        period.toMillis(),
                        TimeUnit.MILLISECONDS));
    }

    /** What says a file changed: through links, its identity, size and modification time. */
    private static List<Object> stamp(Path... files) throws IOException {
        List<Object> stamp = new ArrayList<>();
        for (Path f : files) {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
            stamp.add(Objects.toString(a.fileKey()));
            stamp.add(a.size());
            stamp.add(a.lastModifiedTime());
        }
        return stamp;
    }

    private static X509Certificate[] certificates(Path pem) throws IOException {
        try (InputStream in = Files.newInputStream(pem)) {
            X509Certificate[] certs = CertificateUtils.getX509Certificates(in);
            if (certs.length == 0) {
                throw new IOException(pem + " holds no certificate");
            }
            return certs;
        } catch (GeneralSecurityException e) {
            throw new IOException(pem + ": " + e.getMessage(), e);
        }
    }

    private static PrivateKey privateKey(Path pem) throws IOException {
        try (InputStream in = Files.newInputStream(pem)) {
            return CertificateUtils.getPrivateKey(in);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IOException(pem + " holds no usable PKCS#8 key: " + e.getMessage(), e);
        }
    }

    /** A key renewed without its certificate (or the reverse) would fail every handshake: refused. */
    private static void checkPair(X509Certificate cert, PrivateKey key, Path certFile, Path keyFile)
            throws IOException {
        if (!KeyPairs.belong(key, cert.getPublicKey())) {
            throw new IOException("the key " + keyFile + " does not belong to the certificate " + certFile);
        }
    }

    @Override
    public void close() {
        reloads.forEach(r -> r.cancel(false));
        reloads.clear();
    }
}
