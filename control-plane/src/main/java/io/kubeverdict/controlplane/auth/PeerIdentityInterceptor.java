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

/** Puts the verified client certificate's identity (if any) into the call's Context. */
public final class PeerIdentityInterceptor implements ServerInterceptor {
    static final Context.Key<PeerIdentity> IDENTITY = Context.key("kubeverdict-peer-identity");

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        PeerIdentity identity = identity(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
        if (identity == null) {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(IDENTITY, identity), call, headers, next);
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
