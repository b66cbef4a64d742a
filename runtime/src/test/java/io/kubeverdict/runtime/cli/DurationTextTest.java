// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationTextTest {
    @ParameterizedTest
    @CsvSource({
        "5s, PT5S",
        "2m, PT2M",
        "1h30m, PT1H30M",
        "1h30m15s, PT1H30M15S",
        "500ms, PT0.5S",
        "1.5s, PT1.5S",
        ".5m, PT30S",
        "250us, PT0.00025S",
        "250µs, PT0.00025S",
        "10ns, PT0.00000001S",
        "0, PT0S",
        "PT1M, PT1M",
        "pt10s, PT10S",
        "' 30s ', PT30S"
    })
    void goKubectlAndIsoSpellings(String text, String iso) {
        assertThat(DurationText.parse(text)).isEqualTo(Duration.parse(iso));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "5x", "s", "1h 30m", "-5s", "PT-5S", "5s5", "1.2.3s", "P", "99999999999h"})
    void anythingElseIsRefusedSayingWhy(String text) {
        assertThatThrownBy(() -> DurationText.parse(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("'" + text + "'");
    }

    @Test
    void formerlyBareNumbersKeepTheirUnit() {
        assertThat(new DurationText.OrSeconds().convert("30")).isEqualTo(Duration.ofSeconds(30));
        assertThat(new DurationText.OrSeconds().convert("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(new DurationText.OrMillis().convert("1500")).isEqualTo(Duration.ofMillis(1500));
        assertThat(new DurationText.OrMillis().convert("2s")).isEqualTo(Duration.ofSeconds(2));
    }
}
