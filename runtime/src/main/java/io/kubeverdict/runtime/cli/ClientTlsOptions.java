// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import io.kubeverdict.runtime.grpc.ClientChannels;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --tls-ca [--tls-cert --tls-key] [--tls-server-name]}: TLS to the control plane, verified
 * against a CA, mutual with a client certificate and key.
 */
public final class ClientTlsOptions {
    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            description = "Client certificate (PEM) for mTLS to the control plane.")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "Its private key (PEM, PKCS#8).")
    Path key;

    @Option(
            names = "--tls-ca",
            paramLabel = "FILE",
            description = "CA certificate(s) that signed the control plane's "
                    + "certificate (TLS; a bundle of several during a CA rotation). It and --tls-cert/--tls-key are re-read "
                    + "when they change (every 30 s), for the next connection.")
    Path ca;

    @Option(
            names = "--tls-server-name",
            paramLabel = "NAME",
            description = "Expected name in the control plane's certificate, when it differs from HOST.")
    String serverName;

    /**
     * False for plaintext; throws {@link IllegalArgumentException} for a certificate without its
     * key, or a client certificate or server name without the CA.
     */
    public boolean enabled() {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        if (ca == null && cert != null) {
            throw new IllegalArgumentException("--tls-cert and --tls-key need --tls-ca");
        }
        if (ca == null && serverName != null) {
            throw new IllegalArgumentException("--tls-server-name needs --tls-ca");
        }
        return ca != null;
    }

    /** Whether a client certificate is given (mutual TLS). */
    public boolean mutual() {
        return enabled() && cert != null;
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
        return enabled()
                ? java.util.Optional.of(new ClientChannels.Tls(cert, key, ca, serverName))
                : java.util.Optional.empty();
    }

    /** null: HOST of the target. */
    public String serverName() {
        return serverName;
    }
}
