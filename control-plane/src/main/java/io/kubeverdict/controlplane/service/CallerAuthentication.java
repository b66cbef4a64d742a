// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ServerInterceptor;
import io.kubeverdict.controlplane.auth.AgentBinding;
import io.kubeverdict.controlplane.auth.BearerTokenInterceptor;
import io.kubeverdict.controlplane.auth.CachingTokenReviewer;
import io.kubeverdict.controlplane.auth.InspectionAccess;
import io.kubeverdict.controlplane.auth.KubernetesTokenReviewer;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.auth.TokenReviewLimits;
import io.kubeverdict.controlplane.source.KubernetesSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the gRPC server tells who calls, from {@link ControlPlane.Auth}: the interceptors that
 * authenticate a caller before any work, and the authorizer that decides which node's state it may
 * read or sync.
 */
record CallerAuthentication(NodeAuthorizer authorizer, List<ServerInterceptor> interceptors) {
    private static final Logger log = LoggerFactory.getLogger(CallerAuthentication.class);

    /**
     * @param client the API (null with a manifest directory, which has no TokenReview)
     * @param pods where a token's pod is looked up (null without the API)
     */
    static CallerAuthentication of(
            ControlPlane.Auth auth,
            boolean tls,
            InetSocketAddress listen,
            KubernetesClient client,
            KubernetesSource pods,
            MeterRegistry registry) {
        if (auth instanceof ControlPlane.Auth.Tokens t) {
            if (client == null) {
                throw new IllegalArgumentException("token authentication needs the Kubernetes API (TokenReview); "
                        + "a manifest directory has none");
            }
            AgentBinding binding = new AgentBinding(
                    t.agentNamespace(),
                    t.agentServiceAccount(),
                    pods::pod,
                    InspectionAccess.subjectAccessReviews(client));
            ServerInterceptor tokens = new BearerTokenInterceptor(
                    new CachingTokenReviewer(new KubernetesTokenReviewer(client, t.audience())),
                    new TokenReviewLimits(TokenReviewLimits.Config.defaults(), System::nanoTime),
                    binding,
                    registry);
            log.info("agents authenticate with tokens of {} for audience {}", binding.agentUsername(), t.audience());
            return new CallerAuthentication(NodeAuthorizer.requireAgentToken(), List.of(tokens));
        }
        if (auth instanceof ControlPlane.Auth.Certificates) {
            return new CallerAuthentication(NodeAuthorizer.requireNodeCertificate(), List.of());
        }
        if (tls) {
            // Plaintext says so in GrpcEndpoint's warning; TLS alone hides nothing from who connects.
            log.warn(
                    "agents are NOT authenticated (--auth none): anyone who reaches {} may sync and inspect every "
                            + "node's policy state; use --auth token or mtls in production",
                    listen);
        }
        return new CallerAuthentication(NodeAuthorizer.allowAll(), List.of());
    }
}
