// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Who a verified client certificate says the caller is. A certificate names node N when its
 * subject CN is {@code system:node:N} (the kubelet's client-certificate convention, so kubelet
 * certificates can be reused) or when one of its DNS subject alternative names is exactly N.
 */
public record PeerIdentity(String commonName, Set<String> dnsNames) {
    public static final String NODE_CN_PREFIX = "system:node:";

    public static PeerIdentity of(X509Certificate cert) {
        return new PeerIdentity(commonName(cert), dnsNames(cert));
    }

    public boolean names(String node) {
        if (node == null || node.isEmpty()) {
            return false;
        }
        return (NODE_CN_PREFIX + node).equals(commonName) || dnsNames.contains(node);
    }

    /**
     * Whether this is a node's certificate: a {@code system:node:} CN or any DNS SAN. Only a
     * certificate with neither (an operator's) is not.
     */
    public boolean isNodeCertificate() {
        return commonName.startsWith(NODE_CN_PREFIX) || !dnsNames.isEmpty();
    }

    /** Every node this certificate names: the node of a {@code system:node:} CN and each DNS SAN. */
    public Set<String> nodeNames() {
        Set<String> out = new LinkedHashSet<>();
        if (commonName.startsWith(NODE_CN_PREFIX) && commonName.length() > NODE_CN_PREFIX.length()) {
            out.add(commonName.substring(NODE_CN_PREFIX.length()));
        }
        out.addAll(dnsNames);
        return Set.copyOf(out);
    }

    @Override
    public String toString() {
        return "CN=" + commonName + (dnsNames.isEmpty() ? "" : " DNS=" + dnsNames);
    }

    private static String commonName(X509Certificate cert) {
        try {
            List<Rdn> rdns = new LdapName(cert.getSubjectX500Principal().getName()).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    return rdns.get(i).getValue().toString();
                }
            }
            return "";
        } catch (InvalidNameException e) {
            return "";
        }
    }

    private static Set<String> dnsNames(X509Certificate cert) {
        Set<String> names = new LinkedHashSet<>();
        try {
            Collection<List<?>> sans = cert.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (san.size() >= 2 && Integer.valueOf(2).equals(san.get(0))) { // 2 = dNSName
                        names.add(String.valueOf(san.get(1)));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // No usable SANs: the CN alone decides.
        }
        return Set.copyOf(names);
    }
}
