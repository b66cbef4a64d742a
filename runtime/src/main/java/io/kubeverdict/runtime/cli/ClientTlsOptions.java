package io.kubeverdict.runtime.cli;

import io.kubeverdict.runtime.grpc.ClientChannels;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --tls-cert --tls-key --tls-ca [--tls-server-name]}: mutual TLS to the control plane. */
public final class ClientTlsOptions {
    @Option(names = "--tls-cert", paramLabel = "FILE", description = "Client certificate (PEM) for mTLS to the control plane.")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "Its private key (PEM, PKCS#8).")
    Path key;

    @Option(names = "--tls-ca", paramLabel = "FILE", description = "CA certificate(s) that signed the control plane's certificate.")
    Path ca;

    @Option(names = "--tls-server-name", paramLabel = "NAME",
            description = "Expected name in the control plane's certificate, when it differs from HOST.")
    String serverName;

    /** False for plaintext; throws {@link IllegalArgumentException} when only some files are given. */
    public boolean enabled() {
        int given = (cert == null ? 0 : 1) + (key == null ? 0 : 1) + (ca == null ? 0 : 1);
        if (given != 0 && given != 3) {
            throw new IllegalArgumentException("--tls-cert, --tls-key and --tls-ca go together");
        }
        if (given == 0 && serverName != null) {
            throw new IllegalArgumentException("--tls-server-name needs --tls-cert, --tls-key and --tls-ca");
        }
        return given == 3;
    }

    public Path cert() {
        return cert;
    }

    public Path key() {
        return key;
    }

    public Path ca() {
        return ca;
    }

    /** The TLS material, or empty for plaintext; throws {@link IllegalArgumentException} like {@link #enabled}. */
    public java.util.Optional<ClientChannels.Tls> tls() {
        return enabled() ? java.util.Optional.of(new ClientChannels.Tls(cert, key, ca, serverName)) : java.util.Optional.empty();
    }

    /** null: HOST of the target. */
    public String serverName() {
        return serverName;
    }
}
