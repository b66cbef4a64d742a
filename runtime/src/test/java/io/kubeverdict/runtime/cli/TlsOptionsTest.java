// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.runtime.grpc.ServerTls;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class TlsOptionsTest {
    @Command(name = "server")
    static final class Server implements Callable<Integer> {
        @Mixin
        ServerTlsOptions tls;

        @Override
        public Integer call() {
            return 0;
        }
    }

    @Command(name = "client")
    static final class Client implements Callable<Integer> {
        @Mixin
        ClientTlsOptions tls;

        @Override
        public Integer call() {
            return 0;
        }
    }

    private static ServerTlsOptions server(String... args) {
        Server s = new Server();
        new CommandLine(s).parseArgs(args);
        return s.tls;
    }

    private static ClientTlsOptions client(String... args) {
        Client c = new Client();
        new CommandLine(c).parseArgs(args);
        return c.tls;
    }

    @Test
    void serverTlsIsCertificateAndKeyWithAnOptionalClientCa() {
        assertThat(server().tls()).isEmpty();
        assertThat(server("--tls-cert", "c", "--tls-key", "k", "--tls-client-ca", "ca")
                        .tls())
                .contains(new ServerTls(Path.of("c"), Path.of("k"), Path.of("ca")));
        assertThat(server("--tls-cert", "c", "--tls-key", "k").tls())
                .contains(new ServerTls(Path.of("c"), Path.of("k"), null));
        assertThatThrownBy(() -> server("--tls-cert", "c").tls()).hasMessage("--tls-cert and --tls-key go together");
        assertThatThrownBy(() -> server("--tls-client-ca", "ca").tls())
                .hasMessage("--tls-client-ca needs --tls-cert and --tls-key");
    }

    @Test
    void clientTlsIsACaWithAnOptionalCertificate() {
        assertThat(client().enabled()).isFalse();
        ClientTlsOptions all = client("--tls-cert", "c", "--tls-key", "k", "--tls-ca", "ca", "--tls-server-name", "cp");
        assertThat(all.enabled()).isTrue();
        assertThat(all.cert()).isEqualTo(Path.of("c"));
        assertThat(all.key()).isEqualTo(Path.of("k"));
        assertThat(all.ca()).isEqualTo(Path.of("ca"));
        assertThat(all.serverName()).isEqualTo("cp");
        assertThat(all.mutual()).isTrue();
        ClientTlsOptions caOnly = client("--tls-ca", "ca");
        assertThat(caOnly.enabled()).isTrue();
        assertThat(caOnly.mutual()).isFalse();
        assertThatThrownBy(() -> client("--tls-cert", "c", "--tls-ca", "ca").enabled())
                .hasMessage("--tls-cert and --tls-key go together");
        assertThatThrownBy(() -> client("--tls-cert", "c", "--tls-key", "k").enabled())
                .hasMessage("--tls-cert and --tls-key need --tls-ca");
        assertThatThrownBy(() -> client("--tls-server-name", "cp").enabled())
                .hasMessageContaining("--tls-server-name needs");
    }
}
