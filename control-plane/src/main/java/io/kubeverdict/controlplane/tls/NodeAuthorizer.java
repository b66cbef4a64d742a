package io.kubeverdict.controlplane.tls;

import io.grpc.Status;

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
}
