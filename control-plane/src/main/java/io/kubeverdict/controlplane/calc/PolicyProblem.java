// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

/**
 * Something in a policy the engine cannot use. The unusable part matches nothing (or, in a Deny
 * or Pass rule of an admin-tier policy, everything: upstream's fail-closed "Deny all").
 *
 * @param namespace the NetworkPolicy's namespace; "" for the cluster-scoped admin-tier kinds
 * @param kind the object's kind: "NetworkPolicy" or one of {@link AdminPolicyKind}'s
 */
public record PolicyProblem(String namespace, String name, String field, String message, String kind) {
    public static final String NETWORK_POLICY = "NetworkPolicy";

    /** A problem of a NetworkPolicy. */
    public PolicyProblem(String namespace, String name, String field, String message) {
        this(namespace, name, field, message, NETWORK_POLICY);
    }

    /** A problem of a cluster-scoped admin-tier policy. */
    public static PolicyProblem of(AdminPolicyKind kind, String name, String field, String message) {
        return new PolicyProblem("", name, field, message, kind.kind());
    }

    /** The admin-tier kind, or null for a NetworkPolicy. */
    public AdminPolicyKind adminKind() {
        return AdminPolicyKind.byKindName(kind);
    }

    @Override
    public String toString() {
        String object = NETWORK_POLICY.equals(kind) ? namespace + "/" + name : kind + " " + name;
        return object + ": " + field + ": " + message;
    }
}
