// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.grpc;

import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * TLS for a server, from PEM files: our certificate chain and private key (PKCS#8), and, for
 * mutual TLS, the CA that must have signed every client's certificate (clients without one fail
 * the handshake). Without a client CA, clients are not asked for a certificate (they prove who
 * they are some other way, e.g. a bearer token). The files are re-read every {@code reloadEvery}
 * ({@link TlsFileReloads}): renewed certificates take effect without a restart.
 *
 * @param clientCa null: no client certificates
 */
public record ServerTls(Path certChain, Path privateKey, Path clientCa, Duration reloadEvery) {
    public ServerTls(Path certChain, Path privateKey, Path clientCa) {
        this(certChain, privateKey, clientCa, TlsFileReloads.DEFAULT_PERIOD);
    }

    /** Credentials whose material follows the files until {@code reloads} is closed. */
    public record Opened(ServerCredentials credentials, TlsFileReloads reloads) {}

    public Opened open() throws IOException {
        TlsFileReloads reloads = new TlsFileReloads(reloadEvery);
        try {
            TlsServerCredentials.Builder b =
                    TlsServerCredentials.newBuilder().keyManager(reloads.keyManager(certChain, privateKey));
            if (clientCa != null) {
                b.trustManager(reloads.trustManager(clientCa)).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
            return new Opened(b.build(), reloads);
        } catch (IOException | RuntimeException e) {
            reloads.close();
            throw e;
        }
    }
}
