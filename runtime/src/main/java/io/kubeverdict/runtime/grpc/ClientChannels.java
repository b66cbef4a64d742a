// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC channel to a kube-verdict server: plaintext, TLS or mutual TLS, with keepalive for long
 * streams, and call credentials (a bearer token) on every call when given.
 */
public final class ClientChannels {
    /**
     * TLS material: the server's CA (bundle), an optional expected name, and for mutual TLS our
     * certificate and key (PEM, PKCS#8; both null without). The files are re-read every
     * {@code reloadEvery} while the channel is open ({@link TlsFileReloads}): a rotated CA bundle
     * or client certificate is used by the next connection.
     */
    public record Tls(Path cert, Path key, Path ca, String serverName, Duration reloadEvery) {
        public Tls(Path cert, Path key, Path ca, String serverName) {
            this(cert, key, ca, serverName, TlsFileReloads.DEFAULT_PERIOD);
        }
    }

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
        TlsFileReloads reloads = null;
        if (tls != null) {
            reloads = new TlsFileReloads(tls.reloadEvery());
            try {
                TlsChannelCredentials.Builder b =
                        TlsChannelCredentials.newBuilder().trustManager(reloads.trustManager(tls.ca()));
                if (tls.cert() != null) {
                    b.keyManager(reloads.keyManager(tls.cert(), tls.key()));
                }
                credentials = b.build();
            } catch (IOException | RuntimeException e) {
                reloads.close();
                throw e;
            }
        }
        if (callCredentials != null) {
            credentials = CompositeChannelCredentials.create(credentials, callCredentials);
        }
        // Netty's builder itself rather than Grpc.newChannelBuilder: the provider registry's
        // service-loader scan was ~35 ms of the agent's start, and Netty is the one transport.
        ManagedChannelBuilder<?> builder = NettyChannelBuilder.forTarget(target, credentials)
                // notice a vanished server (no FIN) within a minute
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .maxInboundMessageSize(8 << 20);
        if (tls != null && tls.serverName() != null) {
            builder.overrideAuthority(tls.serverName());
        }
        ManagedChannel channel = builder.build();
        return reloads == null ? channel : new ChannelWithReloads(channel, reloads);
    }
}
