// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.autotls;

import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What the TLS material should be at a given time: pure, so every replica that looks at the same
 * Secret at the same time wants the same thing. A CA is replaced in two steps: a next CA appears
 * {@code caRenewBefore} its predecessor expires and is only trusted (the agents' bundle) until it
 * is {@code caOverlap} old; then it signs the serving certificate and the old one stays trusted
 * (as previous) until it expires, for replicas that still serve its certificate. The serving
 * certificate is re-issued when a third of its lifetime is left, when its names differ from the
 * wanted ones, or when its CA changed.
 */
public final class RenewalPlan {
    /** How long things live. */
    public record Lifetimes(Duration ca, Duration caRenewBefore, Duration caOverlap, Duration serving) {
        public static Lifetimes defaults() {
            return new Lifetimes(Duration.ofDays(3650), Duration.ofDays(365), Duration.ofDays(1), Duration.ofDays(90));
        }

        public Lifetimes {
            if (caRenewBefore.compareTo(ca) >= 0
                    || caOverlap.compareTo(caRenewBefore) >= 0
                    || serving.compareTo(ca) >= 0) {
                throw new IllegalArgumentException("lifetimes out of order: " + this);
            }
        }
    }

    static final String CA_NAME = "kube-verdict control plane CA";

    private final List<String> dnsNames;
    private final Lifetimes lifetimes;

    RenewalPlan(List<String> dnsNames, Lifetimes lifetimes) {
        if (dnsNames.isEmpty()) {
            throw new IllegalArgumentException("the serving certificate needs at least one DNS name");
        }
        this.dnsNames = List.copyOf(dnsNames);
        this.lifetimes = lifetimes;
    }

    /** @param current null: nothing usable is stored; the result is {@code current} when nothing is due */
    TlsMaterial plan(TlsMaterial current, Instant now) {
        if (current == null || !now.isBefore(current.ca().notAfter())) {
            KeyedCertificate ca = CertificateIssuer.newCa(CA_NAME, now, lifetimes.ca());
            return new TlsMaterial(ca, null, null, CertificateIssuer.serving(ca, dnsNames, now, lifetimes.serving()));
        }
        KeyedCertificate ca = current.ca();
        KeyedCertificate next = current.next();
        X509Certificate previous = current.previous();
        if (previous != null && !now.isBefore(previous.getNotAfter().toInstant())) {
            previous = null;
        }
        if (next != null && !now.isBefore(madeAt(next).plus(lifetimes.caOverlap()))) {
            previous = ca.certificate();
            ca = next;
            next = null;
        }
        if (next == null && previous == null && !now.isBefore(ca.notAfter().minus(lifetimes.caRenewBefore()))) {
            next = CertificateIssuer.newCa(CA_NAME, now, lifetimes.ca());
        }
        KeyedCertificate serving = current.serving();
        if (ca != current.ca() || servingDue(serving, ca, now)) {
            serving = CertificateIssuer.serving(ca, dnsNames, now, lifetimes.serving());
        }
        if (ca == current.ca()
                && next == current.next()
                && previous == current.previous()
                && serving == current.serving()) {
            return current;
        }
        return new TlsMaterial(ca, next, previous, serving);
    }

    private static Instant madeAt(KeyedCertificate c) {
        return c.notBefore().plus(CertificateIssuer.BACKDATE);
    }

    private boolean servingDue(KeyedCertificate serving, KeyedCertificate ca, Instant now) {
        if (!now.isBefore(serving.notAfter().minus(lifetimes.serving().dividedBy(3)))) {
            return true;
        }
        try {
            serving.certificate().verify(ca.certificate().getPublicKey());
        } catch (GeneralSecurityException e) {
            return true;
        }
        return !dnsNames(serving.certificate()).equals(dnsNames);
    }

    private static List<String> dnsNames(X509Certificate cert) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> sans = cert.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (Integer.valueOf(2).equals(san.get(0))) { // dNSName
                        names.add((String) san.get(1));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            return List.of();
        }
        return names;
    }
}
