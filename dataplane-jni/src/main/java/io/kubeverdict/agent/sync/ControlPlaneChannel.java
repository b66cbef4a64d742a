package io.kubeverdict.agent.sync;

import io.grpc.ManagedChannel;
import io.kubeverdict.runtime.grpc.ClientChannels;
import java.io.IOException;
import java.nio.file.Path;

/** The gRPC channel to the control plane: plaintext or mTLS, with keepalive. */
public final class ControlPlaneChannel {
    private ControlPlaneChannel() {}

    /** mTLS material: our certificate and key (PEM, PKCS#8), the CA of the server, an optional expected name. */
    public record Tls(Path cert, Path key, Path ca, String serverName) {}

    /** @param tls null for plaintext; the shared client channel of the runtime module */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        return ClientChannels.open(target,
                tls == null ? null : new ClientChannels.Tls(tls.cert(), tls.key(), tls.ca(), tls.serverName()));
    }
}
