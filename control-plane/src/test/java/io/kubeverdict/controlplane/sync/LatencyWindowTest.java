// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LatencyWindowTest {
    @Test
    void nearestRankQuantilesOverTheNewestSamples() {
        LatencyWindow w = new LatencyWindow(4);
        assertThat(w.quantile(0.5)).isEqualTo(-1);
        for (long v : new long[] {100, 1, 2, 3, 4}) { // 100 falls out of the ring
            w.add(v);
        }
        assertThat(w.size()).isEqualTo(4);
        assertThat(w.quantile(0.5)).isEqualTo(2);
        assertThat(w.quantile(0.99)).isEqualTo(4);
        assertThat(w.quantile(0.25)).isEqualTo(1);
    }
}
