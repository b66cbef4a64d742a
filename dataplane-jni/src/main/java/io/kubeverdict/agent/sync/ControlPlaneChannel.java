package io.kubeverdict.agent.sync;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The gRPC channel to the control plane: plaintext or mTLS, with keepalive. */
public final class ControlPlaneChannel {
    private ControlPlaneChannel() {}

    /** mTLS material: our certificate and key (PEM, PKCS#8), the CA of the server, an optional expected name. */
    public record Tls(Path cert, Path key, Path ca, String serverName) {}

    /** @param tls null for plaintext */
    public static ManagedChannel open(String target, Tls tls) throws IOException {
        ChannelCredentials credentials = InsecureChannelCredentials.create();
        if (tls != null) {
            credentials = TlsChannelCredentials.newBuilder()
                    .keyManager(tls.cert().toFile(), tls.key().toFile())
                    .trustManager(tls.ca().toFile())
                    .build();
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
