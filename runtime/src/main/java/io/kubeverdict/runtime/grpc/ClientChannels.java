package io.kubeverdict.runtime.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A gRPC channel to a kube-verdict server: plaintext or mTLS, with keepalive for long streams. */
public final class ClientChannels {
    /** mTLS material: our certificate and key (PEM, PKCS#8), the server's CA, an optional expected name. */
    public record Tls(Path cert, Path key, Path ca, String serverName) {}

    private ClientChannels() {}

    /**
     * @param target a gRPC target, e.g. {@code HostPort.toString()}
     * @param tls null for plaintext
     */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        ChannelCredentials credentials = InsecureChannelCredentials.create();
        if (tls != null) {
            credentials = TlsChannelCredentials.newBuilder()
                    .keyManager(tls.cert().toFile(), tls.key().toFile())
                    .trustManager(tls.ca().toFile())
                    .build();
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
