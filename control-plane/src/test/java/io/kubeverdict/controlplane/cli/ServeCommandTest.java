// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.runtime.BuildVersion;
import io.kubeverdict.runtime.cli.HostPort;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServeCommandTest {
    private static int run(StringWriter out, StringWriter err, String... args) {
        CommandLine cl = ControlPlaneMain.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        return cl.execute(args);
    }

    private static int run(StringWriter err, String... args) {
        return run(new StringWriter(), err, args);
    }

    @Test
    void tlsFlagsGoTogether(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int rc = run(err, "control-plane", "--manifests", dir.toString(), "--tls-cert", "x.pem");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--tls-cert and --tls-key go together");
    }

    @Test
    void plaintextBeyondLoopbackOnlyWithInsecure(@TempDir Path dir) {
        for (String address : new String[] {"0.0.0.0:9443", ":9443", "10.1.2.3:9443", "[::]:9443"}) {
            StringWriter err = new StringWriter();
            int rc = run(err, "control-plane", "--manifests", dir.toString(), "--listen", address);
            assertThat(rc).as(address).isEqualTo(2);
            assertThat(err.toString()).as(address).contains("--listen").contains("--insecure");
        }
    }

    /** Audit L8: TLS without authentication is as open as plaintext: beyond loopback only on purpose. */
    @Test
    void noAuthenticationBeyondLoopbackOnlyWithInsecure(@TempDir Path dir) {
        for (String address : new String[] {"0.0.0.0:9443", ":9443", "10.1.2.3:9443", "[::]:9443"}) {
            StringWriter err = new StringWriter();
            int rc = run(
                    err,
                    "control-plane",
                    "--manifests",
                    dir.toString(),
                    "--tls-cert",
                    "c.pem",
                    "--tls-key",
                    "k.pem",
                    "--auth",
                    "none",
                    "--listen",
                    address);
            assertThat(rc).as(address).isEqualTo(2);
            assertThat(err.toString()).as(address).contains("--listen", "--auth none", "--insecure");
        }
    }

    /** The console is plain HTTP: a token sent to it from elsewhere would cross the path in clear. */
    @Test
    void theConsoleBeyondLoopbackOnlyWithInsecure(@TempDir Path dir) {
        for (String address : new String[] {"0.0.0.0:9180", "10.1.2.3:9180", "[::]:9180"}) {
            StringWriter err = new StringWriter();
            int rc = run(
                    err,
                    "control-plane",
                    "--manifests",
                    dir.toString(),
                    "--listen",
                    "127.0.0.1:0",
                    "--auth",
                    "none",
                    "--console-listen",
                    address);
            assertThat(rc).as(address).isEqualTo(2);
            assertThat(err.toString()).as(address).contains("--console-listen", "--insecure");
        }
    }

    @Test
    void eachAuthModeNeedsWhatItChecksWith(@TempDir Path dir) {
        String[][] refused = {
            {"--manifests", dir.toString(), "--listen", "127.0.0.1:0"}, // token by default: no TokenReview here
            {"--manifests", dir.toString(), "--listen", "127.0.0.1:0", "--auth", "mtls"},
            {"--manifests", dir.toString(), "--listen", "127.0.0.1:0", "--auth", "sometimes"},
            {"--kubeconfig", "k", "--listen", "127.0.0.1:0", "--agent-service-account", "just-a-name"},
            {"--manifests", dir.toString(), "--listen", "0.0.0.0:0", "--auto-tls", "--auth", "none"},
            {"--kubeconfig", "k", "--listen", "0.0.0.0:0", "--auto-tls", "--tls-cert", "c", "--tls-key", "k"},
            {"--kubeconfig", "k", "--listen", "127.0.0.1:0", "--max-streams-per-caller", "1"},
            {"--kubeconfig", "k", "--listen", "127.0.0.1:0", "--inspection-rate", "NaN"},
        };
        String[] says = {
            "--auth token needs the Kubernetes API",
            "--auth mtls needs",
            "--auth must be token, mtls or none",
            "--agent-service-account must be NAMESPACE/NAME",
            "--auto-tls makes its own certificate",
            "--auto-tls makes its own certificate",
            "call limits must allow an agent's two streams",
            "call limits must allow an agent's two streams"
        };
        for (int i = 0; i < refused.length; i++) {
            StringWriter err = new StringWriter();
            String[] args = new String[refused[i].length + 1];
            args[0] = "control-plane";
            System.arraycopy(refused[i], 0, args, 1, refused[i].length);
            assertThat(run(err, args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString()).as(String.join(" ", args)).contains(says[i]);
        }
    }

    @Test
    void anUnusableFlowExportEndpointStopsTheStart(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int rc = run(err, "control-plane", "--manifests", dir.toString(), "--flow-export-otlp", "http://[collector");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--flow-export-otlp").contains("is no URL");
        err = new StringWriter();
        rc = run(
                err,
                "control-plane",
                "--manifests",
                dir.toString(),
                "--flow-history-window",
                "0",
                "--flow-export-otlp",
                "http://collector:4318");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--flow-history-window 0");
    }

    @Test
    void kubeconfigAndManifestsExcludeEachOther(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int rc = run(err, "control-plane", "--manifests", dir.toString(), "--kubeconfig", "k");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("mutually exclusive");
    }

    @Test
    void listenAddressesParseAtTheCommandLine() {
        ServeCommand serve = new ServeCommand();
        CommandLine cl = new CommandLine(serve);
        cl.parseArgs();
        assertThat(serve.listen).isEqualTo(new HostPort("0.0.0.0", 9443));
        assertThat(serve.metrics.bind()).isEqualTo(new HostPort("0.0.0.0", 9100));
        cl.parseArgs("--listen", "[::1]:9443", "--metrics-bind-address", "");
        assertThat(serve.listen).isEqualTo(new HostPort("::1", 9443));
        assertThat(serve.metrics.bind()).as("empty disables").isNull();
        cl.parseArgs("--listen", ":9443", "--metrics-bind-address", "off");
        assertThat(serve.listen.socketAddress().getAddress().isAnyLocalAddress())
                .isTrue();
        assertThat(serve.metrics.socketAddress()).isNull();

        for (String bad : new String[] {"9443", "off", "::1:9443", "0.0.0.0:70000"}) {
            StringWriter err = new StringWriter();
            assertThat(run(err, "control-plane", "--listen", bad)).as(bad).isEqualTo(2);
            assertThat(err.toString()).as(bad).contains("Invalid value for option '--listen'");
        }
    }

    @Test
    void versionOnTheRootAndEverySubcommand() {
        for (String[] args : new String[][] {
            {"--version"}, {"control-plane", "--version"}, {"matrix", "--version"}, {"explain", "-V"}
        }) {
            StringWriter out = new StringWriter();
            assertThat(run(out, new StringWriter(), args))
                    .as(String.join(" ", args))
                    .isZero();
            assertThat(out.toString().strip())
                    .as(String.join(" ", args))
                    .isEqualTo("kube-verdict " + BuildVersion.current());
        }
    }

    @Test
    void theJarHasExactlyTheControlPlaneCommands() {
        assertThat(ControlPlaneMain.commandLine().getSubcommands().keySet())
                .containsExactlyInAnyOrder(
                        "control-plane",
                        "matrix",
                        "explain",
                        "status",
                        "policies",
                        "observe",
                        "flows",
                        "whatif",
                        "recommend",
                        "wait",
                        "help",
                        "version",
                        "completion");
    }
}
