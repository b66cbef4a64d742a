package io.kubeverdict.runtime.cli;

import io.kubeverdict.runtime.grpc.ServerTls;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/** {@code --tls-cert --tls-key --tls-client-ca}: mutual TLS for a gRPC server, all three or none. */
public final class ServerTlsOptions {
    @Option(names = "--tls-cert", paramLabel = "FILE", description = "Server certificate chain (PEM).")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "Server private key (PEM, PKCS#8).")
    Path key;

    @Option(names = "--tls-client-ca", paramLabel = "FILE",
            description = "CA (PEM) that signs client certificates; clients without one are refused. An agent's "
                    + "certificate may only sync the node it names (subject CN system:node:NAME, or a DNS SAN "
                    + "equal to NAME).")
    Path clientCa;

    /** Empty for plaintext; throws {@link IllegalArgumentException} when only some are given. */
    public Optional<ServerTls> tls() {
        int given = (cert == null ? 0 : 1) + (key == null ? 0 : 1) + (clientCa == null ? 0 : 1);
        if (given == 0) {
            return Optional.empty();
        }
        if (given != 3) {
            throw new IllegalArgumentException("--tls-cert, --tls-key and --tls-client-ca go together");
        }
        return Optional.of(new ServerTls(cert, key, clientCa));
    }
}
