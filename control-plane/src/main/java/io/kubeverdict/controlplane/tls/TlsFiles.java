package io.kubeverdict.controlplane.tls;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.nio.file.Path;

/** Server credentials for mTLS from PEM files: our certificate chain and key, and the client CA. */
public record TlsFiles(Path certChain, Path privateKey, Path clientCa) {
    public ServerCredentials serverCredentials() throws IOException {
        return TlsServerCredentials.newBuilder()
                .keyManager(certChain.toFile(), privateKey.toFile())
                .trustManager(clientCa.toFile())
                .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                .build();
    }
}
