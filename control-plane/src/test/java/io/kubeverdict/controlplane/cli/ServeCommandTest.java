package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServeCommandTest {
    private static int run(StringWriter err, String... args) {
        CommandLine cl = new CommandLine(new ControlPlaneMain());
        cl.setErr(new PrintWriter(err));
        return cl.execute(args);
    }

    @Test
    void tlsFlagsGoTogether(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int rc = run(err, "control-plane", "--manifests", dir.toString(), "--tls-cert", "x.pem");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--tls-cert, --tls-key and --tls-client-ca go together");
    }

    @Test
    void kubeconfigAndManifestsExcludeEachOther(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int rc = run(err, "control-plane", "--manifests", dir.toString(), "--kubeconfig", "k");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("mutually exclusive");
    }

    @Test
    void listenAddresses() {
        assertThat(ServeCommand.address("127.0.0.1:9443")).isEqualTo(new InetSocketAddress("127.0.0.1", 9443));
        assertThat(ServeCommand.address(":9100").getPort()).isEqualTo(9100);
        assertThat(ServeCommand.address(":9100").getAddress().isAnyLocalAddress()).isTrue();
        assertThat(ServeCommand.address("[::1]:9443")).isEqualTo(new InetSocketAddress("::1", 9443));
        assertThatThrownBy(() -> ServeCommand.address("9443")).isInstanceOf(IllegalArgumentException.class);
    }
}
