package io.kubeverdict.runtime.grpc;

import io.grpc.CallCredentials;
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
 * A gRPC channel to a kube-verdict server: plaintext, TLS or mutual TLS, with keepalive for long
 * streams, and call credentials (a bearer token) on every call when given.
 */
public final class ClientChannels {
    /**
     * TLS material: the server's CA, an optional expected name, and for mutual TLS our certificate
     * and key (PEM, PKCS#8; both null without).
     */
    public record Tls(Path cert, Path key, Path ca, String serverName) {}

    private ClientChannels() {}

    /**
     * @param target a gRPC target, e.g. {@code HostPort.toString()}
     * @param tls null for plaintext
     */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        return open(target, tls, null);
    }

    /** @param callCredentials null: none; else attached to every call of the channel */
    public static ManagedChannel open(String target, Tls tls, CallCredentials callCredentials) throws IOException {
        ChannelCredentials credentials = InsecureChannelCredentials.create();
        if (tls != null) {
            TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(tls.ca().toFile());
            if (tls.cert() != null) {
                b.keyManager(tls.cert().toFile(), tls.key().toFile());
            }
            credentials = b.build();
        }
        if (callCredentials != null) {
            credentials = CompositeChannelCredentials.create(credentials, callCredentials);
        }
        ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(target, credentials)
                // notice a vanished server (no FIN) within a minute
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
