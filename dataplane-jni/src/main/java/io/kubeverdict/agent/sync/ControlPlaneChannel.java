package io.kubeverdict.agent.sync;

import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

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

    /** @param tls null for plaintext */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        return open(target, tls, null);
    }

    /** @param tls null for plaintext; @param tokenFile null: no token */
    public static ManagedChannel open(String target, Tls tls, Path tokenFile) throws IOException {
        ChannelCredentials credentials = InsecureChannelCredentials.create();
        if (tls != null) {
            TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(tls.ca().toFile());
            if (tls.cert() != null) {
                b.keyManager(tls.cert().toFile(), tls.key().toFile());
            }
            credentials = b.build();
        }
        if (tokenFile != null) {
            credentials = CompositeChannelCredentials.create(credentials, new TokenFileCredentials(tokenFile));
        }
        ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(target, credentials)
                // notice a vanished control plane (no FIN) within a minute; the old state stays enforced
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .maxInboundMessageSize(8 << 20);
        if (tls != null && tls.serverName() != null) {
            builder.overrideAuthority(tls.serverName());
        }
        return builder.build();
    }
}
