// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import io.kubeverdict.runtime.grpc.KeyPairs;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the control plane's TLS Secret holds: the CA that signs the serving certificate, the next
 * CA while a rotation waits for agents to trust it, the previous CA while certificates it signed
 * may still be served by other replicas, and the serving certificate with its key.
 *
 * @param next null outside a CA rotation
 * @param previous null when no certificate of an earlier CA can still be in use
 */
record TlsMaterial(KeyedCertificate ca, KeyedCertificate next, X509Certificate previous, KeyedCertificate serving) {
    static final String CA_CERT = "ca.crt";
    static final String CA_KEY = "ca.key";
    static final String NEXT_CERT = "ca-next.crt";
    static final String NEXT_KEY = "ca-next.key";
    static final String PREVIOUS_CERT = "ca-previous.crt";
    static final String TLS_CERT = "tls.crt";
    static final String TLS_KEY = "tls.key";

    /** The CAs agents must trust: every one whose certificates may be served. */
    List<X509Certificate> trusted() {
        List<X509Certificate> out = new ArrayList<>();
        out.add(ca.certificate());
        if (next != null) {
            out.add(next.certificate());
        }
        if (previous != null) {
            out.add(previous);
        }
        return out;
    }

    String bundlePem() {
        return Pem.of(trusted().toArray(X509Certificate[]::new));
    }

    Map<String, String> toData() {
        Map<String, String> data = new LinkedHashMap<>();
        data.put(CA_CERT, Pem.of(ca.certificate()));
        data.put(CA_KEY, Pem.of(ca.key()));
        if (next != null) {
            data.put(NEXT_CERT, Pem.of(next.certificate()));
            data.put(NEXT_KEY, Pem.of(next.key()));
        }
        if (previous != null) {
            data.put(PREVIOUS_CERT, Pem.of(previous));
        }
        data.put(TLS_CERT, Pem.of(serving.certificate()));
        data.put(TLS_KEY, Pem.of(serving.key()));
        return data;
    }

    /** Reads a Secret's (decoded) data; an IOException says what is wrong with it. */
    static TlsMaterial fromData(Map<String, String> data) throws IOException {
        KeyedCertificate ca = pair(data, CA_CERT, CA_KEY, true);
        KeyedCertificate next = data.containsKey(NEXT_CERT) || data.containsKey(NEXT_KEY)
                ? pair(data, NEXT_CERT, NEXT_KEY, true)
                : null;
        X509Certificate previous = data.containsKey(PREVIOUS_CERT) ? single(data, PREVIOUS_CERT) : null;
        KeyedCertificate serving = pair(data, TLS_CERT, TLS_KEY, false);
        try {
            serving.certificate().verify(ca.certificate().getPublicKey());
        } catch (GeneralSecurityException e) {
            throw new IOException(TLS_CERT + " is not signed by " + CA_CERT);
        }
        return new TlsMaterial(ca, next, previous, serving);
    }

    private static KeyedCertificate pair(Map<String, String> data, String certKey, String keyKey, boolean isCa)
            throws IOException {
        X509Certificate cert = single(data, certKey);
        String keyPem = data.get(keyKey);
        if (keyPem == null) {
            throw new IOException(keyKey + " is missing");
        }
        KeyedCertificate pair;
        try {
            pair = new KeyedCertificate(cert, Pem.privateKey(keyPem));
        } catch (IOException e) {
            throw new IOException(keyKey + ": " + e.getMessage(), e);
        }
        if (!KeyPairs.belong(pair.key(), cert.getPublicKey())) {
            throw new IOException(keyKey + " does not belong to " + certKey);
        }
        if (isCa && cert.getBasicConstraints() < 0) {
            throw new IOException(certKey + " is not a CA certificate");
        }
        return pair;
    }

    private static X509Certificate single(Map<String, String> data, String key) throws IOException {
        String pem = data.get(key);
        if (pem == null) {
            throw new IOException(key + " is missing");
        }
        try {
            List<X509Certificate> certs = Pem.certificates(pem);
            if (certs.size() != 1) {
                throw new IOException("holds " + certs.size() + " certificates, not one");
            }
            return certs.get(0);
        } catch (IOException e) {
            throw new IOException(key + ": " + e.getMessage(), e);
        }
    }
}
