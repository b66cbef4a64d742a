// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.flows.OtlpFlowExport;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class FlowExportOptionsTest {
    private static FlowExportOptions parse(String... args) {
        FlowExportOptions o = new FlowExportOptions();
        new CommandLine(o).parseArgs(args);
        return o;
    }

    @Test
    void anEndpointWithoutAPathGetsTheLogsPath() {
        assertThat(FlowExportOptions.endpoint("http://collector:4318"))
                .isEqualTo(URI.create("http://collector:4318/v1/logs"));
        assertThat(FlowExportOptions.endpoint("HTTPS://collector:4318/"))
                .isEqualTo(URI.create("https://collector:4318/v1/logs"));
        assertThat(FlowExportOptions.endpoint("http://[::1]:4318/otlp/v1/logs"))
                .isEqualTo(URI.create("http://[::1]:4318/otlp/v1/logs"));
    }

    @Test
    void anUnusableEndpointIsRefusedNamingTheFlag() {
        for (String bad : List.of("http://[bad", "collector:4318", "grpc://collector:4317", "http:///v1/logs", "")) {
            assertThatThrownBy(() -> FlowExportOptions.endpoint(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--flow-export-otlp");
        }
        assertThatThrownBy(() -> FlowExportOptions.endpoint("http://c:4318/v1/logs?x=1"))
                .hasMessageContaining("no query");
    }

    @Test
    void headersAreNameValuePairsAndABadOneIsNotEchoed() {
        assertThat(FlowExportOptions.headers(List.of("X-Scope-OrgID=tenant-1", "Authorization=Bearer a=b")))
                .isEqualTo(Map.of("X-Scope-OrgID", "tenant-1", "Authorization", "Bearer a=b"));
        assertThatThrownBy(() -> FlowExportOptions.headers(List.of("ok=1", "secret-token")))
                .hasMessageContaining("number 2")
                .hasMessageNotContaining("secret-token");
    }

    @Test
    void theExportNeedsTheHistoryAndSensibleBounds() {
        assertThat(parse().settings(true)).isEmpty();
        assertThatThrownBy(() -> parse("--flow-export-otlp", "http://c:4318").settings(false))
                .hasMessageContaining("--flow-history-window 0");
        assertThatThrownBy(() -> parse("--flow-export-otlp", "http://c:4318", "--flow-export-queue", "0")
                        .settings(true))
                .hasMessageContaining("--flow-export-queue");
        assertThatThrownBy(() -> parse("--flow-export-otlp-header", "a=b").settings(true))
                .hasMessageContaining("need --flow-export-otlp");
        OtlpFlowExport.Settings s = parse("--flow-export-otlp", "http://c:4318", "--flow-export-otlp-header", "a=b")
                .settings(true)
                .orElseThrow();
        assertThat(s.endpoint()).isEqualTo(URI.create("http://c:4318/v1/logs"));
        assertThat(s.headers()).containsEntry("a", "b");
        assertThat(s.maxQueue()).isEqualTo(16384);
    }

    @Test
    void aCaIsForHttpsAndMustBeReadable(@TempDir Path dir) throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        assertThatThrownBy(() -> parse("--flow-export-otlp", "http://c:4318", "--flow-export-otlp-ca", ca.toString())
                        .settings(true))
                .hasMessageContaining("https");
        assertThatThrownBy(() -> parse(
                                "--flow-export-otlp",
                                "https://c:4318",
                                "--flow-export-otlp-ca",
                                dir.resolve("missing.pem").toString())
                        .settings(true))
                .hasMessageContaining("cannot read");
        assertThat(parse("--flow-export-otlp", "https://c:4318", "--flow-export-otlp-ca", ca.toString())
                        .settings(true)
                        .orElseThrow()
                        .trustedCertificatesPem())
                .isNotEmpty();
    }
}
