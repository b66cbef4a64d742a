// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.pki;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway CA issuing server and client certificates as PEM files (EC P-256, PKCS#8 keys),
 * for the mTLS tests of every module. Made in the JVM, so no openssl is needed.
 */
public final class TestPki {
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());
    private final Path dir;
    private final KeyPair caKey;
    private final X509Certificate caCert;
    /** The CA certificate, NAME-ca.pem in the directory. */
    public final Path caFile;

    /** A certificate file and its private key file. */
    public record Issued(Path cert, Path key) {}

    public TestPki(Path dir, String caName) throws Exception {
        this.dir = dir;
        this.caKey = keyPair();
        X500Name name = new X500Name("CN=" + caName);
        X509v3CertificateBuilder b = builder(name, name, caKey);
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        this.caCert = sign(b, caKey);
        this.caFile = write(caName + "-ca.pem", caCert);
    }

    /**
     * A leaf certificate with subject CN {@code cn}, the given DNS SANs and IP SAN 127.0.0.1,
     * written as FILE.pem and FILE-key.pem; returns {certFile, keyFile}.
     */
    public Path[] issue(String file, String cn, String... dnsNames) throws Exception {
        Issued i = leaf(file, cn, dnsNames);
        return new Path[] {i.cert(), i.key()};
    }

    /** {@link #issue} as a record. */
    public Issued leaf(String file, String cn, String... dnsNames) throws Exception {
        KeyPair kp = keyPair();
        X509v3CertificateBuilder b =
                builder(new X500Name(caCert.getSubjectX500Principal().getName()), new X500Name("CN=" + cn), kp);
        GeneralName[] sans = new GeneralName[dnsNames.length + 1];
        for (int i = 0; i < dnsNames.length; i++) {
            sans[i] = new GeneralName(GeneralName.dNSName, dnsNames[i]);
        }
        sans[dnsNames.length] = new GeneralName(GeneralName.iPAddress, "127.0.0.1");
        b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
        X509Certificate cert = sign(b, caKey);
        return new Issued(write(file + ".pem", cert), write(file + "-key.pem", kp.getPrivate()));
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair subjectKey) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(
                issuer,
                BigInteger.valueOf(SERIAL.incrementAndGet()),
                Date.from(now.minus(1, ChronoUnit.HOURS)),
                Date.from(now.plus(1, ChronoUnit.DAYS)),
                subject,
                subjectKey.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuerKey) throws Exception {
        return new JcaX509CertificateConverter()
                .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey.getPrivate())));
    }

    private Path write(String name, Object pemObject) throws IOException {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            w.writeObject(pemObject instanceof PrivateKey k ? new JcaPKCS8Generator(k, null) : pemObject);
        }
        Path p = dir.resolve(name);
        Files.writeString(p, sw.toString());
        return p;
    }
}
