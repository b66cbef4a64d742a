package io.kubeverdict.runtime.grpc;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.nio.file.Path;

/**
 * TLS for a server, from PEM files: our certificate chain and private key (PKCS#8), and, for
 * mutual TLS, the CA that must have signed every client's certificate (clients without one fail
 * the handshake). Without a client CA, clients are not asked for a certificate (they prove who
 * they are some other way, e.g. a bearer token).
 *
 * @param clientCa null: no client certificates
 */
public record ServerTls(Path certChain, Path privateKey, Path clientCa) {
    public ServerCredentials credentials() throws IOException {
        TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder().keyManager(certChain.toFile(), privateKey.toFile());
        if (clientCa != null) {
            b.trustManager(clientCa.toFile()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
        }
        return b.build();
    }
}
