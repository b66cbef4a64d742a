// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.flows;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OtlpFlowExportStartTest {
    @Test
    void aCaThatIsNoCertificateIsRefusedAtTheStart() {
        byte[] notPem = "not a certificate".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> OtlpFlowExport.start(
                        new OtlpFlowExport.Settings(
                                URI.create("https://127.0.0.1:1/v1/logs"), Map.of(), notPem, Duration.ofSeconds(1), 8),
                        new SimpleMeterRegistry()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("CA certificates");
    }
}
