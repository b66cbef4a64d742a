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
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Puts the {@link Caller} of a call's bearer token ({@code authorization: Bearer TOKEN}) into its
 * Context: reviewed ({@link TokenReviewer}, cached) and bound ({@link AgentBinding}). A call without
 * a token has no caller, or is {@link Caller#loopback()} when it arrived on a loopback address;
 * what each method requires is decided by the services
 * ({@code NodeAuthorizer}). Runs on the call's executor, not the transport's event loop, so a
 * review that waits for the API server blocks only this call.
 */
public final class BearerTokenInterceptor implements ServerInterceptor {
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final String BEARER = "Bearer ";
    /** Longer than any ServiceAccount token; a bigger header is not reviewed. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    private final TokenReviewer reviewer;
    private final AgentBinding binding;

    public BearerTokenInterceptor(TokenReviewer reviewer, AgentBinding binding) {
        this.reviewer = reviewer;
        this.binding = binding;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        String header = headers.get(AUTHORIZATION);
        Caller caller;
        if (header != null) {
            caller = caller(header);
        } else if (onLoopback(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR))) {
            caller = Caller.loopback(); // kubectl port-forward, or inside the pod
        } else {
            return next.startCall(call, headers);
        }
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, caller), call, headers, next);
    }

    /** Whether the peer is on a loopback address (an IPv4-mapped one counts: Java makes it IPv4). */
    static boolean onLoopback(SocketAddress remote) {
        return remote instanceof InetSocketAddress a && a.getAddress() != null && a.getAddress().isLoopbackAddress();
    }

    Caller caller(String header) {
        if (!header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return Caller.refused("", Status.UNAUTHENTICATED.withDescription("authorization is not a Bearer token"));
        }
        String token = header.substring(BEARER.length()).strip();
        if (token.isEmpty() || token.length() > MAX_TOKEN_CHARS) {
            return Caller.refused("", Status.UNAUTHENTICATED.withDescription("the bearer token is empty or too long"));
        }
        return binding.bind(reviewer.review(token));
    }
}
