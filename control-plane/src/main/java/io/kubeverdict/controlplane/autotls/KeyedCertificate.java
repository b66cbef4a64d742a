// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;

/** A certificate with its private key. */
record KeyedCertificate(X509Certificate certificate, PrivateKey key) {
    Instant notBefore() {
        return certificate.getNotBefore().toInstant();
    }

    Instant notAfter() {
        return certificate.getNotAfter().toInstant();
    }
}
