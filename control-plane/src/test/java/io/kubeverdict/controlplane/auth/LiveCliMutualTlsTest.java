// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.testing.pki.TestPki;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The live commands take the agent's TLS flags and work against a control plane that wants client certificates. */
class LiveCliMutualTlsTest {
    @TempDir
    Path dir;

    @Test
    void statusWithAClientCertificateAndWithout() throws Exception {
        TestPki pki = new TestPki(dir, "kube-verdict-test");
        Path[] server = pki.issue("server", "kube-verdict-control-plane", "localhost");
        Path[] operator = pki.issue("operator", "operator");
        try (ControlPlane cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        new ServerTls(server[0], server[1], pki.caFile),
                        PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(
                        Path.of("../deploy/examples/netpol-basic"), new EngineDirectoryReader()))) {
            cp.firstCalculation().get(60, TimeUnit.SECONDS);
            String target = "localhost:" + cp.grpcPort();

            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = ControlPlaneMain.commandLine()
                    .setOut(new PrintWriter(out))
                    .setErr(new PrintWriter(err))
                    .execute(
                            "status",
                            "--control-plane",
                            target,
                            "--tls-cert",
                            operator[0].toString(),
                            "--tls-key",
                            operator[1].toString(),
                            "--tls-ca",
                            pki.caFile.toString());
            assertThat(exit).as(err.toString()).isEqualTo(1); // asked fine; no agent is connected
            assertThat(out.toString()).contains("node-1").contains("disconnected");

            StringWriter plainErr = new StringWriter();
            int plain = ControlPlaneMain.commandLine()
                    .setOut(new PrintWriter(new StringWriter()))
                    .setErr(new PrintWriter(plainErr))
                    .execute("status", "--control-plane", target, "--timeout", "PT10S");
            assertThat(plain).isEqualTo(3);
            assertThat(plainErr.toString()).contains("UNAVAILABLE");

            StringWriter halfErr = new StringWriter();
            int half = ControlPlaneMain.commandLine()
                    .setOut(new PrintWriter(new StringWriter()))
                    .setErr(new PrintWriter(halfErr))
                    .execute("status", "--control-plane", target, "--tls-cert", operator[0].toString());
            assertThat(half).isEqualTo(2);
            assertThat(halfErr.toString()).contains("--tls-key");
        }
    }
}
