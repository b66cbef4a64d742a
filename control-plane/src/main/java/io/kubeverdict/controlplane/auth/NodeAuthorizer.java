// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Status;
import java.util.Set;

/**
 * Decides whether the current call may act for a node, and which nodes it may inspect, by the
 * identity the server's authentication put into the call's Context:
 * <ul>
 *   <li>{@link #allowAll()}: no authentication (plaintext on purpose, tests): everyone may;</li>
 *   <li>{@link #requireNodeCertificate()}: the verified client certificate must name the node
 *       ({@link PeerIdentity#names});</li>
 *   <li>{@link #requireAgentToken}: the bearer token must be the agent ServiceAccount's, bound to
 *       that node ({@link Caller}); an agent inspects its own node, a tokenless call on loopback
 *       ({@code kubectl port-forward}, authorized by the API server) every node, anyone else none.</li>
 * </ul>
 * Every refusal is logged with why (the caller gets the same text), within {@link RefusalLog}'s
 * limits: a line a minute per peer and code, the client's words escaped and cut.
 */
public final class NodeAuthorizer {
    private enum Mode {
        NONE,
        CERTIFICATE,
        TOKEN
    }

    private final Mode mode;
    private final RefusalLog refusals = new RefusalLog();

    private NodeAuthorizer(Mode mode) {
        this.mode = mode;
    }

    public static NodeAuthorizer allowAll() {
        return new NodeAuthorizer(Mode.NONE);
    }

    public static NodeAuthorizer requireNodeCertificate() {
        return new NodeAuthorizer(Mode.CERTIFICATE);
    }

    public static NodeAuthorizer requireAgentToken() {
        return new NodeAuthorizer(Mode.TOKEN);
    }

    /** OK, or the status to fail the call with. */
    public Status authorize(String node) {
        Status s = switch (mode) {
            case NONE -> Status.OK;
            case CERTIFICATE -> byCertificate(node);
            case TOKEN -> byToken(node);
        };
        if (!s.isOk()) {
            refusals.refused(node, s);
        }
        return s;
    }

    private static Status byCertificate(String node) {
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

    private static Status byToken(String node) {
        Caller caller = Caller.current();
        if (caller == null || caller.onLoopback()) {
            return Status.UNAUTHENTICATED.withDescription("a bearer token is required (the agent's projected "
                    + "ServiceAccount token, audience kube-verdict)");
        }
        if (caller.refusal() != null) {
            return caller.refusal();
        }
        if (!caller.isAgent()) {
            return Status.PERMISSION_DENIED.withDescription(caller.username() + " is not the agent's ServiceAccount");
        }
        if (!caller.node().equals(node)) {
            return Status.PERMISSION_DENIED.withDescription(
                    "the token of " + caller + " is bound to node '" + caller.node() + "', not '" + node + "'");
        }
        return Status.OK;
    }

    /**
     * Which nodes the current call may inspect. Without authentication, and for a certificate that
     * names no node (an operator's), every node; a node's certificate or an agent's token reads only
     * its own node, so a node's credentials cannot read the policy state of the rest of the cluster.
     * With tokens, a tokenless call on loopback reads every node, and so does a user whose
     * inspection the API server allows (SubjectAccessReview); anyone else none, with why
     * ({@link InspectionScope#refusal()}).
     */
    public InspectionScope inspectionScope() {
        switch (mode) {
            case NONE:
                return InspectionScope.all();
            case CERTIFICATE: {
                PeerIdentity id = PeerIdentityInterceptor.IDENTITY.get();
                if (id == null) {
                    return InspectionScope.only(Set.of());
                }
                return id.isNodeCertificate() ? InspectionScope.only(id.nodeNames()) : InspectionScope.all();
            }
            default: {
                Caller caller = Caller.current();
                if (caller == null) {
                    return InspectionScope.none(Status.UNAUTHENTICATED.withDescription("inspection needs a connection "
                            + "on the control plane's loopback (kubectl port-forward) or an agent's token"));
                }
                if (caller.refusal() != null) {
                    return InspectionScope.none(caller.refusal());
                }
                if (caller.isAgent()) {
                    return InspectionScope.only(Set.of(caller.node()));
                }
                if (caller.onLoopback()) {
                    return InspectionScope.all(); // the API server let them port-forward into our pod
                }
                if (caller.inspection() != null && caller.inspection().isOk()) {
                    return InspectionScope.all(); // the API server allowed it (SubjectAccessReview)
                }
                return InspectionScope.none(
                        caller.inspection() != null
                                ? caller.inspection()
                                : Status.PERMISSION_DENIED.withDescription(caller + " may not inspect"));
            }
        }
    }
}
