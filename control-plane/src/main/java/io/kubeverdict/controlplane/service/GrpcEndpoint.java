// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.grpc.BindableService;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.kubeverdict.controlplane.auth.PeerIdentityInterceptor;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerLimits;
import io.kubeverdict.runtime.grpc.ServerTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's gRPC server (PolicySync, ControlPlaneInspection, plus the shared bootstrap's
 * health and reflection): each call carries the verified client certificate's identity, which
 * PolicySync checks against the node it asks for.
 */
public final class GrpcEndpoint {
    private static final Logger log = LoggerFactory.getLogger(GrpcEndpoint.class);

    private GrpcEndpoint() {}

    /** @param tls null: plaintext, with a loud warning */
    public static GrpcServer create(InetSocketAddress listen, ServerTls tls, List<BindableService> services)
            throws IOException {
        return create(listen, tls, ServerLimits.defaults(), null, List.of(), services);
    }

    /**
     * @param callLimits null: none; else counted against the identity the authentication found
     * @param authentication more interceptors that put the caller's identity into the Context
     *     (bearer tokens), besides the client certificate's
     */
    public static GrpcServer create(
            InetSocketAddress listen,
            ServerTls tls,
            ServerLimits limits,
            ServerInterceptor callLimits,
            List<ServerInterceptor> authentication,
            List<BindableService> services)
            throws IOException {
        GrpcServer.Builder b = GrpcServer.builder(listen).tls(tls).limits(limits);
        // ServerInterceptors runs the LAST of the list first: the limits (first) see what the
        // certificate and token interceptors put into the Context.
        List<ServerInterceptor> interceptors = new ArrayList<>();
        if (callLimits != null) {
            interceptors.add(callLimits);
        }
        interceptors.addAll(authentication);
        interceptors.add(new PeerIdentityInterceptor());
        for (BindableService s : services) {
            b.service(ServerInterceptors.intercept(s, interceptors));
        }
        if (tls == null) {
            // One line: a banner of several would be several unrelated events in a log pipeline.
            log.warn(
                    "gRPC WITHOUT TLS on {}: anyone on the path can read what is sent{}; "
                            + "give it TLS (--tls-cert/--tls-key) in production",
                    listen,
                    authentication.isEmpty() ? ", and any client can read any node's policy snapshot" : "");
        }
        return b.build();
    }
}
