// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Grpc;
import io.grpc.ServerCall;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Whom a call's limits are counted against, by the strongest identity it carries: an accepted
 * bearer token's user (an agent is its ServiceAccount bound to one node, so each node counts on
 * its own), else the verified client certificate, else the peer's address (plaintext, refused
 * tokens, loopback). Read in the Context the authentication interceptors filled.
 */
public final class CallerKey {
    private CallerKey() {}

    public static String of(ServerCall<?, ?> call) {
        Caller caller = Caller.current();
        if (caller != null && caller.refusal() == null && !caller.onLoopback()) {
            return caller.node() != null ? "node " + caller.node() : "user " + caller.username();
        }
        PeerIdentity certificate = PeerIdentityInterceptor.IDENTITY.get();
        if (certificate != null) {
            return "certificate " + certificate;
        }
        return "address " + address(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    }

    /** The peer's IP address as text (not the port: a new connection is not a new caller). */
    static String address(SocketAddress remote) {
        if (remote instanceof InetSocketAddress a && a.getAddress() != null) {
            return a.getAddress().getHostAddress();
        }
        return String.valueOf(remote);
    }
}
