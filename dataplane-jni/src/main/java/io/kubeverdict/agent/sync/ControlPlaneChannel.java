// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.sync;

import io.grpc.ManagedChannel;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.runtime.grpc.TokenFileCredentials;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The gRPC channel to the control plane: plaintext, TLS or mutual TLS, with keepalive, and the
 * agent's token on every call when it has one.
 */
public final class ControlPlaneChannel {
    private ControlPlaneChannel() {}

    /**
     * TLS material: the CA of the server, an optional expected name, and for mutual TLS our
     * certificate and key (PEM, PKCS#8; both null without).
     */
    public record Tls(Path cert, Path key, Path ca, String serverName) {}

    /** @param tls null for plaintext; the shared client channel of the runtime module */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        return open(target, tls, null);
    }

    /** @param tls null for plaintext; @param tokenFile null: no token */
    public static ManagedChannel open(String target, Tls tls, Path tokenFile) throws IOException {
        return ClientChannels.open(
                target,
                tls == null ? null : new ClientChannels.Tls(tls.cert(), tls.key(), tls.ca(), tls.serverName()),
                tokenFile == null ? null : new TokenFileCredentials(tokenFile));
    }
}
