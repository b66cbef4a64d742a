package io.kubeverdict.controlplane.tls;

import java.util.Set;

/**
 * The nodes a caller may inspect: every node (no TLS, or an operator's certificate that names no
 * node) or only the nodes its certificate names (a node's certificate reads only its own state).
 */
public final class InspectionScope {
    private static final InspectionScope ALL = new InspectionScope(null);

    private final Set<String> nodes; // null: all

    private InspectionScope(Set<String> nodes) {
        this.nodes = nodes;
    }

    public static InspectionScope all() {
        return ALL;
    }

    public static InspectionScope only(Set<String> nodes) {
        return new InspectionScope(Set.copyOf(nodes));
    }

    public boolean isAll() {
        return nodes == null;
    }

    public boolean permits(String node) {
        return nodes == null || nodes.contains(node);
    }

    @Override
    public String toString() {
        return nodes == null ? "all nodes" : "nodes " + nodes;
    }
}
