// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

/**
 * The cluster-scoped policy kinds of the network-policy-api ({@value #GROUP}) the calculation
 * enforces next to NetworkPolicy, with what the API server and the snapshots call them.
 */
public enum AdminPolicyKind {
    ADMIN_NETWORK_POLICY("v1alpha1", "AdminNetworkPolicy", "adminnetworkpolicies", "anp"),
    BASELINE_ADMIN_NETWORK_POLICY("v1alpha1", "BaselineAdminNetworkPolicy", "baselineadminnetworkpolicies", "banp"),
    CLUSTER_NETWORK_POLICY("v1alpha2", "ClusterNetworkPolicy", "clusternetworkpolicies", "cnp");

    public static final String GROUP = "policy.networking.k8s.io";

    private final String version;
    private final String kind;
    private final String plural;
    private final String shortName;

    AdminPolicyKind(String version, String kind, String plural, String shortName) {
        this.version = version;
        this.kind = kind;
        this.plural = plural;
        this.shortName = shortName;
    }

    public String version() {
        return version;
    }

    /** "policy.networking.k8s.io/v1alpha1". */
    public String apiVersion() {
        return GROUP + "/" + version;
    }

    public String kind() {
        return kind;
    }

    public String plural() {
        return plural;
    }

    /** "adminnetworkpolicy": how events of the kind are named ("adminnetworkpolicy/upsert"), like "networkpolicy". */
    public String eventKind() {
        return kind.toLowerCase(java.util.Locale.ROOT);
    }

    /** "anp", "banp", "cnp": the kubectl short name, also used in keys. */
    public String shortName() {
        return shortName;
    }

    /** The kind of an object, or null when it is none of these (another group, version or kind). */
    public static AdminPolicyKind of(String apiVersion, String kind) {
        for (AdminPolicyKind k : values()) {
            if (k.kind.equals(kind) && k.apiVersion().equals(apiVersion)) {
                return k;
            }
        }
        return null;
    }

    /** The kind of that name in any version of the group (for objects of an unsupported version). */
    public static AdminPolicyKind byKindName(String kind) {
        for (AdminPolicyKind k : values()) {
            if (k.kind.equals(kind)) {
                return k;
            }
        }
        return null;
    }
}
