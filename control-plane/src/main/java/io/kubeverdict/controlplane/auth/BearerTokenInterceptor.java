package io.kubeverdict.controlplane.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Puts the {@link Caller} of a call's bearer token ({@code authorization: Bearer TOKEN}) into its
 * Context: reviewed ({@link TokenReviewer}, cached) and bound ({@link AgentBinding}). A call without
 * a token has no caller; what each method requires is decided by the services
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
        if (header == null) {
            return next.startCall(call, headers);
        }
        Caller caller = caller(header);
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, caller), call, headers, next);
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
