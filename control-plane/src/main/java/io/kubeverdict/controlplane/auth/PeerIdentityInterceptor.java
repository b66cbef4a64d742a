// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Puts who the peer is into the call's Context: its verified client certificate's identity (if
 * any) and its IP address (for logs about it, which cannot see the call).
 */
public final class PeerIdentityInterceptor implements ServerInterceptor {
    static final Context.Key<PeerIdentity> IDENTITY = Context.key("kubeverdict-peer-identity");
    static final Context.Key<String> ADDRESS = Context.key("kubeverdict-peer-address");

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        PeerIdentity identity = identity(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        Context context = Context.current()
                .withValue(ADDRESS, CallerKey.address(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR)));
        if (identity != null) {
            context = context.withValue(IDENTITY, identity);
        }
        return Contexts.interceptCall(context, call, headers, next);
    }

    private static PeerIdentity identity(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x ? PeerIdentity.of(x) : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}
