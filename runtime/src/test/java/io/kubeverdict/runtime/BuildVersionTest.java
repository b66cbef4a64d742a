// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BuildVersionTest {
    @Test
    void isTheProjectVersionMavenBuilt() {
        // Surefire passes ${project.version}; the resource was filtered by the same build.
        assertThat(System.getProperty("kubeverdict.expected.version")).isNotBlank();
        assertThat(BuildVersion.current()).isEqualTo(System.getProperty("kubeverdict.expected.version"));
    }
}
