// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DomainPatternTest {

    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {
                "api.test, api.test",
                "API.Test., api.test",
                "*.svc.test, *.svc.test",
                "*.Example.COM., *.example.com",
                "kubernetes.io, kubernetes.io",
                "under_score.test, under_score.test",
                "localhost, null", // one label: upstream's validation needs a dot
                "*.test, null",
                "a..test, null",
                "-a.test, null",
                "a.*.test, null",
                "*a.test, null",
                "'', null",
                "api.test.., null",
            })
    void canonicalForm(String pattern, String expected) {
        assertThat(DomainPattern.canonical(pattern)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({
        "api.test, api.test, true",
        "api.test, API.TEST, true",
        "api.test, www.api.test, false",
        "api.test, pi.test, false",
        "*.svc.test, a.svc.test, true",
        "*.svc.test, a.b.svc.test, true",
        "*.svc.test, svc.test, false",
        "*.svc.test, asvc.test, false",
        "*.svc.test, .svc.test, false",
        "*.svc.test, A.SVC.Test, true",
    })
    void matching(String pattern, String name, boolean expected) {
        byte[] bytes = ("xx" + name + "yy").getBytes(StandardCharsets.US_ASCII);
        assertThat(DomainPattern.of(pattern).matches(bytes, 2, name.length())).isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void tooLongLabelsAndNamesAreRefused() {
        assertThat(DomainPattern.canonical("a".repeat(64) + ".test")).isNull();
        assertThat(DomainPattern.canonical("a".repeat(63) + ".test")).isNotNull();
        String name = ("a".repeat(49) + ".").repeat(5) + "test"; // 254 characters
        assertThat(DomainPattern.canonical(name)).isNull();
    }
}
