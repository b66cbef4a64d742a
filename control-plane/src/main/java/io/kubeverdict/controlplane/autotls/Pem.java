// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;

/** PEM text of certificates and PKCS#8 keys, both ways (BouncyCastle's reader and writer). */
final class Pem {
    private Pem() {}

    static String of(X509Certificate... certs) {
        return write((Object[]) certs);
    }

    static String of(PrivateKey key) {
        try {
            return write(new JcaPKCS8Generator(key, null).generate());
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode a private key", e);
        }
    }

    private static String write(Object... objects) {
        StringWriter sw = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
            for (Object o : objects) {
                w.writeObject(o);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write PEM", e);
        }
        return sw.toString();
    }

    /** Every certificate in the text, in order; an error when there is none or something else. */
    static List<X509Certificate> certificates(String pem) throws IOException {
        List<X509Certificate> out = new ArrayList<>();
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            for (Object o; (o = parser.readObject()) != null; ) {
                if (!(o instanceof X509CertificateHolder holder)) {
                    throw new IOException(
                            "expected certificates, found " + o.getClass().getSimpleName());
                }
                out.add(new JcaX509CertificateConverter().getCertificate(holder));
            }
        } catch (CertificateException | RuntimeException e) {
            throw new IOException("not a PEM certificate: " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IOException("no PEM certificate");
        }
        return out;
    }

    static PrivateKey privateKey(String pem) throws IOException {
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            Object o = parser.readObject();
            if (!(o instanceof PrivateKeyInfo info)) {
                throw new IOException("expected a PKCS#8 private key, found "
                        + (o == null ? "nothing" : o.getClass().getSimpleName()));
            }
            return new JcaPEMKeyConverter().getPrivateKey(info);
        } catch (RuntimeException e) {
            throw new IOException("not a PEM private key: " + e.getMessage(), e);
        }
    }
}
