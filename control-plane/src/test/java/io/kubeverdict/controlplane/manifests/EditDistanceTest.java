// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EditDistanceTest {
    @Test
    void countsInsertionsDeletionsSubstitutionsAndAdjacentSwapsOnceEach() {
        assertThat(EditDistance.atMost("pod", "pod", 0)).isTrue();
        assertThat(EditDistance.atMost("podd", "pod", 1)).isTrue();
        assertThat(EditDistance.atMost("po", "pod", 1)).isTrue();
        assertThat(EditDistance.atMost("pdo", "pod", 1))
                .as("a swap is one edit")
                .isTrue();
        assertThat(EditDistance.atMost("job", "pod", 1)).isFalse();
        assertThat(EditDistance.atMost("job", "pod", 2)).isTrue();
        assertThat(EditDistance.atMost("networkpolicie", "networkpolicy", 2)).isTrue();
        assertThat(EditDistance.atMost("", "pod", 2)).isFalse();
    }

    @Test
    void aLongStringIsRefusedByItsLengthAlone() {
        assertThat(EditDistance.atMost("x".repeat(16 * 1024 * 1024), "networkpolicy", 2))
                .isFalse();
    }
}
