// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import io.kubeverdict.runtime.grpc.ServerTls;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code --tls-cert --tls-key [--tls-client-ca]}: TLS for a gRPC server (certificate and key go
 * together), mutual with a client CA.
 */
public final class ServerTlsOptions {
    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            description = "Server certificate chain (PEM). It, the key and the client CA are re-read when they change "
                    + "(every 30 s): renewed certificates serve new connections without a restart.")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "Server private key (PEM, PKCS#8).")
    Path key;

    @Option(
            names = "--tls-client-ca",
            paramLabel = "FILE",
            description = "CA (PEM) that signs client certificates (mutual TLS, --auth mtls); clients without one are "
                    + "refused. An agent's certificate may only sync the node it names (subject CN system:node:NAME, "
                    + "or a DNS SAN equal to NAME).")
    Path clientCa;

    /** Empty for plaintext; throws {@link IllegalArgumentException} for a certificate without its key, or a CA alone. */
    public Optional<ServerTls> tls() {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        if (cert == null) {
            if (clientCa != null) {
                throw new IllegalArgumentException("--tls-client-ca needs --tls-cert and --tls-key");
            }
            return Optional.empty();
        }
        return Optional.of(new ServerTls(cert, key, clientCa));
    }
}
