// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Status;
import java.util.Set;

/**
 * The nodes a caller may inspect: every node (no TLS, or an operator's certificate that names no
 * node) or only the nodes its certificate names (a node's certificate reads only its own state).
 */
public final class InspectionScope {
    private static final InspectionScope ALL = new InspectionScope(null, null);

    private final Set<String> nodes; // null: all
    private final Status refusal; // non-null: no node, and why

    private InspectionScope(Set<String> nodes, Status refusal) {
        this.nodes = nodes;
        this.refusal = refusal;
    }

    public static InspectionScope all() {
        return ALL;
    }

    public static InspectionScope only(Set<String> nodes) {
        return new InspectionScope(Set.copyOf(nodes), null);
    }

    /** No node at all: every inspection call fails with {@code why}. */
    public static InspectionScope none(Status why) {
        return new InspectionScope(Set.of(), why);
    }

    /** Why the caller may inspect nothing, or null. */
    public Status refusal() {
        return refusal;
    }

    public boolean isAll() {
        return nodes == null;
    }

    public boolean permits(String node) {
        return nodes == null || nodes.contains(node);
    }

    @Override
    public String toString() {
        if (refusal != null) {
            return "no node (" + refusal.getDescription() + ")";
        }
        return nodes == null ? "all nodes" : "nodes " + nodes;
    }
}
