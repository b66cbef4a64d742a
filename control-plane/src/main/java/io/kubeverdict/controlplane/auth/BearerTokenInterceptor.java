// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Puts the {@link Caller} of a call's bearer token ({@code authorization: Bearer TOKEN}) into its
 * Context: reviewed ({@link TokenReviewer}, cached) and bound ({@link AgentBinding}). A call without
 * a token has no caller, or is {@link Caller#loopback()} when it arrived on a loopback address;
 * what each method requires is decided by the services
 * ({@code NodeAuthorizer}). Runs on the call's executor, not the transport's event loop, so a
 * review that waits for the API server blocks only this call. A token without a kept answer is
 * reviewed only within {@link TokenReviewLimits} (per peer address, and in flight overall): beyond
 * them the call is refused before the review, so made-up tokens cost the API server and our
 * threads next to nothing.
 */
public final class BearerTokenInterceptor implements ServerInterceptor {
    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final String BEARER = "Bearer ";
    /** Longer than any ServiceAccount token; a bigger header is not reviewed. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    private final CachingTokenReviewer reviewer;
    private final TokenReviewLimits limits;
    private final CallRefusals refusals;
    private final AgentBinding binding;

    public BearerTokenInterceptor(
            CachingTokenReviewer reviewer, TokenReviewLimits limits, AgentBinding binding, MeterRegistry registry) {
        this.reviewer = reviewer;
        this.limits = limits;
        this.binding = binding;
        this.refusals = new CallRefusals(registry);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String header = headers.get(AUTHORIZATION);
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        Caller caller;
        if (header != null) {
            Status malformed = malformed(header);
            if (malformed != null) {
                caller = Caller.refused("", malformed);
            } else {
                String token = header.substring(BEARER.length()).strip();
                Review review = reviewer.kept(token);
                if (review == null) {
                    String address = CallerKey.address(remote);
                    TokenReviewLimits.Refusal limited = limits.tryStart(address);
                    if (limited != null) {
                        return refusals.refuse(
                                call, limited.reason(), limited.code(), "address " + address, limited.why());
                    }
                    try {
                        review = reviewer.review(token);
                    } finally {
                        limits.finished();
                    }
                }
                caller = binding.bind(review);
            }
        } else if (onLoopback(remote)) {
            caller = Caller.loopback(); // kubectl port-forward, or inside the pod
        } else {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, caller), call, headers, next);
    }

    /** Whether the peer is on a loopback address (an IPv4-mapped one counts: Java makes it IPv4). */
    static boolean onLoopback(SocketAddress remote) {
        return remote instanceof InetSocketAddress a
                && a.getAddress() != null
                && a.getAddress().isLoopbackAddress();
    }

    /** Why the header is not a usable bearer token, or null when it is one. */
    private static Status malformed(String header) {
        if (!header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Status.UNAUTHENTICATED.withDescription("authorization is not a Bearer token");
        }
        String token = header.substring(BEARER.length()).strip();
        if (token.isEmpty() || token.length() > MAX_TOKEN_CHARS) {
            return Status.UNAUTHENTICATED.withDescription("the bearer token is empty or too long");
        }
        return null;
    }
}
