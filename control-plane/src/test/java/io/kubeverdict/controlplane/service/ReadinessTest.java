// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadinessTest {
    @Test
    void readyOnlyAfterTheFirstCalculationWhileTheSourceLoadsAndUntilAFatalError() {
        List<Boolean> told = new ArrayList<>();
        Readiness r = new Readiness(told::add);
        assertThat(r.ready()).isFalse();
        assertThat(r.reason()).isEqualTo("first calculation not done");
        r.sourceLoads();
        assertThat(told).isEmpty();

        r.firstCalculationPublished();
        assertThat(r.ready()).isTrue();
        assertThat(r.reason()).isEmpty();
        r.sourceFails("manifest load rejected: a.yaml:1:1: bad");
        assertThat(r.reason()).isEqualTo("manifest load rejected: a.yaml:1:1: bad");
        r.sourceFails("manifest load rejected: a.yaml:2:1: worse");
        r.sourceLoads();
        assertThat(told).containsExactly(true, false, true); // told on changes only

        r.fatal("the calculation thread died");
        r.sourceLoads();
        assertThat(r.ready()).isFalse();
        assertThat(r.reason()).isEqualTo("the calculation thread died");
        assertThat(told).containsExactly(true, false, true, false);
    }

    @Test
    void aServerToldLaterHearsTheStateItMissedThenEachChange() {
        Readiness r = new Readiness();
        r.sourceLoads();
        r.firstCalculationPublished(); // ready before anyone listens: nobody to tell yet
        List<Boolean> told = new ArrayList<>();
        r.tell(told::add);
        assertThat(told).containsExactly(true);
        r.sourceFails("manifest load rejected: a.yaml:1:1: bad");
        assertThat(told).containsExactly(true, false);

        Readiness notYet = new Readiness();
        List<Boolean> none = new ArrayList<>();
        notYet.tell(none::add);
        assertThat(none).isEmpty(); // not ready: the server's default (NOT_SERVING) stands
        notYet.firstCalculationPublished();
        assertThat(none).containsExactly(true);
    }
}
