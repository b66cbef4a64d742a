// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.grpc.Attributes;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.kubeverdict.policy.IpAddress;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * On the console's in-process server only: the call's remote address becomes the browser's (sent
 * by the console as {@link #PEER}), so the interceptors after it (token review limits per address,
 * "tokenless on loopback") judge the browser, not the in-process transport. Nothing outside this
 * process reaches that server, so the header cannot be forged; a call without it is refused.
 */
final class ConsolePeerInterceptor implements ServerInterceptor {
    static final Metadata.Key<String> PEER =
            Metadata.Key.of("x-kube-verdict-console-peer", Metadata.ASCII_STRING_MARSHALLER);

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        InetSocketAddress peer = parse(headers.get(PEER));
        if (peer == null) {
            call.close(
                    Status.UNAUTHENTICATED.withDescription("a console call without its browser's address"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Attributes attributes = call.getAttributes().toBuilder()
                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, peer)
                .build();
        return next.startCall(
                new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public Attributes getAttributes() {
                        return attributes;
                    }
                },
                headers);
    }

    /** "address port" as {@link #format} wrote it; null when absent or not a literal address. */
    static InetSocketAddress parse(String text) {
        if (text == null) {
            return null;
        }
        int space = text.lastIndexOf(' ');
        if (space < 0) {
            return null;
        }
        String literal = text.substring(0, space);
        if (IpAddress.tryParse(literal) == null) {
            return null;
        }
        try {
            // A checked literal: no name lookup.
            InetAddress address = InetAddress.getByName(literal);
            return new InetSocketAddress(address, Integer.parseInt(text.substring(space + 1)));
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    static String format(InetSocketAddress peer) {
        return peer.getAddress().getHostAddress() + " " + peer.getPort();
    }
}
