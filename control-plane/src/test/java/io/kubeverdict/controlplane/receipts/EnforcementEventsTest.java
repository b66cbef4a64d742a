// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnforcementEventsTest {
    private static final long S = 1_000_000_000L;
    private static final PolicyRef NP = PolicyRef.networkPolicy("x", "deny");
    private static final PolicyRef ANP = PolicyRef.parse("adminnetworkpolicy/ops");

    private final EnforcementEvents events = new EnforcementEvents(Duration.ofSeconds(60));
    private final Map<PolicyRef, Receipt> details = new HashMap<>();
    private int elsewhere;

    /** A receipt written at {@code written} on 2 nodes, n2 lagging since the write unless enforced. */
    private Receipt receipt(PolicyRef ref, long generation, long written, boolean enforced) {
        List<Receipt.NodeReceipt> nodes = enforced
                ? List.of(
                        new Receipt.NodeReceipt("n1", true, 1, 1, written),
                        new Receipt.NodeReceipt("n2", true, 1, 1, written))
                : List.of(
                        new Receipt.NodeReceipt("n2", false, 2, 1, written),
                        new Receipt.NodeReceipt("n1", true, 1, 1, written));
        Receipt r = new Receipt(
                ref,
                generation,
                "rv" + generation,
                written,
                true,
                2,
                enforced ? 2 : 1,
                enforced ? written + S : 0,
                enforced ? S : -1,
                nodes,
                enforced ? 0 : 1);
        details.put(ref, r);
        return r;
    }

    private List<EnforcementEvents.Due> sweep(long now, long baseline, Receipt... receipts) {
        return events.due(List.of(receipts), details::get, r -> elsewhere, now, baseline, 5);
    }

    @Test
    void enforcedOncePerGenerationAndNothingPerSweep() {
        List<EnforcementEvents.Due> first = sweep(2 * S, 0, receipt(NP, 1, S, true));
        assertThat(first).singleElement().satisfies(d -> {
            assertThat(d.reason()).isEqualTo(EnforcementEvents.ENFORCED);
            assertThat(d.warning()).isFalse();
            assertThat(d.message()).isEqualTo("enforced on all 2 nodes, 1.0 s after the write (generation 1)");
        });
        assertThat(sweep(3 * S, 0, receipt(NP, 1, S, true)))
                .as("the same generation again")
                .isEmpty();
        assertThat(sweep(4 * S, 0, receipt(NP, 2, 4 * S, false)))
                .as("lagging, not yet stalled")
                .isEmpty();
        assertThat(sweep(5 * S, 0, receipt(NP, 2, 4 * S, true))).hasSize(1);
    }

    @Test
    void writesBeforeTheBaselineAndAdminKindsPostNothing() {
        assertThat(sweep(20 * S, 10 * S, receipt(NP, 1, S, true)))
                .as("written before this replica wrote")
                .isEmpty();
        assertThat(sweep(21 * S, 0, receipt(ANP, 1, 20 * S, true)))
                .as("admin kinds have a condition")
                .isEmpty();
    }

    @Test
    void aStallOnceThenItsRecovery() {
        assertThat(sweep(60 * S, 0, receipt(NP, 1, S, false)))
                .as("not longer than 60 s yet")
                .isEmpty();
        List<EnforcementEvents.Due> stalled = sweep(62 * S, 100 * S, receipt(NP, 1, S, false));
        assertThat(stalled).singleElement().satisfies(d -> {
            assertThat(d.reason()).isEqualTo(EnforcementEvents.NOT_ENFORCED);
            assertThat(d.warning()).isTrue();
            assertThat(d.message())
                    .isEqualTo("enforced on 1 of 2 nodes; 1 lagging, the longest for 61 s: n2 (generation 1)");
        });
        assertThat(sweep(63 * S, 100 * S, receipt(NP, 1, S, false)))
                .as("once per stall")
                .isEmpty();
        assertThat(sweep(64 * S, 100 * S, receipt(NP, 1, S, true)))
                .as("the recovery is news even before the baseline")
                .singleElement()
                .extracting(EnforcementEvents.Due::reason)
                .isEqualTo(EnforcementEvents.ENFORCED);
    }

    @Test
    void noStallEventWhenOnlyNodesReportingElsewhereLag() {
        elsewhere = 1;
        assertThat(sweep(100 * S, 0, receipt(NP, 1, S, false))).isEmpty();
    }

    @Test
    void aFailedPostIsDueAgainAndTheBudgetHolds() {
        EnforcementEvents.Due d = sweep(2 * S, 0, receipt(NP, 1, S, true)).get(0);
        events.failed(d);
        assertThat(sweep(3 * S, 0, receipt(NP, 1, S, true))).containsExactly(d);
        Receipt[] many = new Receipt[8];
        for (int i = 0; i < many.length; i++) {
            many[i] = receipt(PolicyRef.networkPolicy("x", "p" + i), 1, S, true);
        }
        assertThat(sweep(4 * S, 0, many)).hasSize(5);
        assertThat(sweep(5 * S, 0, many)).as("the rest at the next sweep").hasSize(3);
    }
}
