// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import io.kubeverdict.controlplane.calc.AdminPolicyCompiler;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCompiler;
import io.kubeverdict.proto.v1.PolicyId;
import java.util.Locale;

/**
 * A policy object as operators name it: {@code networkpolicy/NAMESPACE/NAME}, or for the
 * cluster-scoped admin tiers {@code adminnetworkpolicy/NAME}, {@code baselineadminnetworkpolicy/NAME},
 * {@code clusternetworkpolicy/NAME} (kubectl's short names anp, banp, cnp and netpol are accepted).
 *
 * @param kind "networkpolicy" or an {@link AdminPolicyKind#eventKind()}
 * @param namespace empty for the cluster-scoped kinds
 */
public record PolicyRef(String kind, String namespace, String name) implements Comparable<PolicyRef> {
    public static final String NETWORK_POLICY = "networkpolicy";

    public static PolicyRef networkPolicy(String namespace, String name) {
        return new PolicyRef(NETWORK_POLICY, namespace, name);
    }

    public static PolicyRef admin(AdminPolicyKind kind, String name) {
        return new PolicyRef(kind.eventKind(), "", name);
    }

    /**
     * The policy a snapshot's entry is: NetworkPolicies are "namespace/name" in tier "default";
     * admin-tier entries are the ANP's or BANP's name, or "cnp:name" for a ClusterNetworkPolicy of
     * either tier (names are DNS subdomains, so no other name holds a colon).
     */
    public static PolicyRef of(PolicyId id) {
        String name = id.getName();
        if (PolicyCompiler.TIER.equals(id.getTier())) {
            int slash = name.indexOf('/');
            return networkPolicy(name.substring(0, slash), name.substring(slash + 1));
        }
        if (name.startsWith("cnp:")) {
            return admin(AdminPolicyKind.CLUSTER_NETWORK_POLICY, name.substring(4));
        }
        return admin(
                AdminPolicyCompiler.BASELINE_TIER.equals(id.getTier())
                        ? AdminPolicyKind.BASELINE_ADMIN_NETWORK_POLICY
                        : AdminPolicyKind.ADMIN_NETWORK_POLICY,
                name);
    }

    /**
     * Parses {@code KIND/NAMESPACE/NAME} (NetworkPolicy) or {@code KIND/NAME} (admin tiers); the
     * kind is case-insensitive and may be plural or kubectl's short name.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static PolicyRef parse(String text) {
        String[] parts = text.split("/", -1);
        String kind = canonicalKind(parts[0]);
        if (kind == null) {
            throw new IllegalArgumentException("'" + text + "': unknown kind '" + parts[0]
                    + "' (networkpolicy, adminnetworkpolicy, baselineadminnetworkpolicy, clusternetworkpolicy)");
        }
        if (kind.equals(NETWORK_POLICY)) {
            if (parts.length != 3 || parts[1].isEmpty() || parts[2].isEmpty()) {
                throw new IllegalArgumentException("'" + text + "': want networkpolicy/NAMESPACE/NAME");
            }
            return networkPolicy(parts[1], parts[2]);
        }
        if (parts.length != 2 || parts[1].isEmpty()) {
            throw new IllegalArgumentException("'" + text + "': want " + kind + "/NAME (it is cluster-scoped)");
        }
        return new PolicyRef(kind, "", parts[1]);
    }

    private static String canonicalKind(String word) {
        String w = word.toLowerCase(Locale.ROOT);
        switch (w) {
            case "networkpolicy", "networkpolicies", "netpol", "networkpolicy.networking.k8s.io":
                return NETWORK_POLICY;
            default:
                break;
        }
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            String qualified = k.eventKind() + "." + AdminPolicyKind.GROUP;
            if (w.equals(k.eventKind()) || w.equals(k.plural()) || w.equals(k.shortName()) || w.equals(qualified)) {
                return k.eventKind();
            }
        }
        return null;
    }

    /** The admin-tier kind, or null for a NetworkPolicy. */
    public AdminPolicyKind adminKind() {
        for (AdminPolicyKind k : AdminPolicyKind.values()) {
            if (k.eventKind().equals(kind)) {
                return k;
            }
        }
        return null;
    }

    /** "networkpolicy/ns/name" or "adminnetworkpolicy/name": what {@link #parse} reads. */
    @Override
    public String toString() {
        return namespace.isEmpty() ? kind + "/" + name : kind + "/" + namespace + "/" + name;
    }

    @Override
    public int compareTo(PolicyRef o) {
        int c = kind.compareTo(o.kind);
        if (c == 0) {
            c = namespace.compareTo(o.namespace);
        }
        return c != 0 ? c : name.compareTo(o.name);
    }
}
