package io.kubeverdict.controlplane.service;

import io.grpc.BindableService;
import io.grpc.ServerInterceptors;
import io.kubeverdict.controlplane.tls.PeerIdentityInterceptor;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerTls;
import java.io.IOException;
import java.net.InetSocketAddress;
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
        GrpcServer.Builder b = GrpcServer.builder(listen).tls(tls);
        PeerIdentityInterceptor identity = new PeerIdentityInterceptor();
        for (BindableService s : services) {
            b.service(ServerInterceptors.intercept(s, identity));
        }
        if (tls == null) {
            // One line: a banner of several would be several unrelated events in a log pipeline.
            log.warn("gRPC WITHOUT TLS on {}: any client can read any node's policy snapshot; "
                    + "use --tls-cert/--tls-key/--tls-client-ca in production", listen);
        }
        return b.build();
    }
}
