package io.kubeverdict.runtime.grpc;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Mutual TLS for a server, from PEM files: our certificate chain and private key (PKCS#8), and the
 * CA that must have signed every client's certificate (clients without one fail the handshake).
 */
public record ServerTls(Path certChain, Path privateKey, Path clientCa) {
    public ServerCredentials credentials() throws IOException {
        return TlsServerCredentials.newBuilder()
                .keyManager(certChain.toFile(), privateKey.toFile())
                .trustManager(clientCa.toFile())
                .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                .build();
    }
}
