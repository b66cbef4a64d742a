// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Makes the control plane's CA and its serving certificates: ECDSA P-256, SHA-256. */
final class CertificateIssuer {
    /** Clocks of nodes differ: a certificate is valid from a little before it was made. */
    static final Duration BACKDATE = Duration.ofMinutes(5);

    private static final SecureRandom RANDOM = new SecureRandom();

    private CertificateIssuer() {}

    static KeyedCertificate newCa(String commonName, Instant now, Duration validity) {
        KeyPair key = keyPair();
        X500Name name = new X500Name("CN=" + commonName);
        try {
            X509v3CertificateBuilder b = builder(name, name, key, now, validity);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(
                    Extension.subjectKeyIdentifier,
                    false,
                    new JcaX509ExtensionUtils().createSubjectKeyIdentifier(key.getPublic()));
            return new KeyedCertificate(sign(b, key), key.getPrivate());
        } catch (GeneralSecurityException | java.io.IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a CA certificate", e);
        }
    }

    static KeyedCertificate serving(KeyedCertificate ca, List<String> dnsNames, Instant now, Duration validity) {
        KeyPair key = keyPair();
        try {
            X509v3CertificateBuilder b = builder(
                    X500Name.getInstance(
                            ca.certificate().getSubjectX500Principal().getEncoded()),
                    new X500Name("CN=" + dnsNames.get(0)),
                    key,
                    now,
                    validity);
            GeneralName[] sans = dnsNames.stream()
                    .map(n -> new GeneralName(GeneralName.dNSName, n))
                    .toArray(GeneralName[]::new);
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
            JcaX509ExtensionUtils utils = new JcaX509ExtensionUtils();
            b.addExtension(
                    Extension.authorityKeyIdentifier, false, utils.createAuthorityKeyIdentifier(ca.certificate()));
            return new KeyedCertificate(
                    sign(b, new KeyPair(ca.certificate().getPublicKey(), ca.key())), key.getPrivate());
        } catch (GeneralSecurityException | java.io.IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a serving certificate", e);
        }
    }

    private static KeyPair keyPair() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(256, RANDOM);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no EC key generator", e);
        }
    }

    private static X509v3CertificateBuilder builder(
            X500Name issuer, X500Name subject, KeyPair subjectKey, Instant now, Duration validity) {
        return new JcaX509v3CertificateBuilder(
                issuer,
                new BigInteger(127, RANDOM).add(BigInteger.ONE),
                Date.from(now.minus(BACKDATE)),
                Date.from(now.plus(validity)),
                subject,
                subjectKey.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuer)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter()
                .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
    }
}
