package io.kubeverdict.controlplane.tls;

import io.grpc.Status;
import java.util.Set;

/**
 * Decides whether the current call may act for a node. With mTLS on, the verified client
 * certificate must name the node ({@link PeerIdentity#names}); without TLS everyone may.
 */
public final class NodeAuthorizer {
    private final boolean required;

    private NodeAuthorizer(boolean required) {
        this.required = required;
    }

    public static NodeAuthorizer allowAll() {
        return new NodeAuthorizer(false);
    }

    public static NodeAuthorizer requireNodeCertificate() {
        return new NodeAuthorizer(true);
    }

    /** OK, or the status to fail the call with. */
    public Status authorize(String node) {
        if (!required) {
            return Status.OK;
        }
        PeerIdentity id = PeerIdentityInterceptor.IDENTITY.get();
        if (id == null) {
            return Status.UNAUTHENTICATED.withDescription("a client certificate is required");
        }
        if (!id.names(node)) {
            return Status.PERMISSION_DENIED.withDescription(
                    "client certificate (" + id + ") does not name node '" + node + "'");
        }
        return Status.OK;
    }

    /**
     * Which nodes the current call may inspect. Without TLS, and for a certificate that names no
     * node (an operator's), every node; a certificate that names nodes reads only those, so a
     * node's key cannot read the policy state of the rest of the cluster.
     */
    public InspectionScope inspectionScope() {
        if (!required) {
            return InspectionScope.all();
        }
        PeerIdentity id = PeerIdentityInterceptor.IDENTITY.get();
        if (id == null) {
            return InspectionScope.only(Set.of());
        }
        return id.isNodeCertificate() ? InspectionScope.only(id.nodeNames()) : InspectionScope.all();
    }
}
