// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnforcedConditionsTest {
    private static final long S = 1_000_000_000L;
    private static final PolicyRef ANP = PolicyRef.admin(AdminPolicyKind.ADMIN_NETWORK_POLICY, "ops");
    private static final PolicyRef CNP = PolicyRef.admin(AdminPolicyKind.CLUSTER_NETWORK_POLICY, "c");

    private final EnforcedConditions conditions = new EnforcedConditions();

    private static Receipt receipt(PolicyRef ref, long generation, boolean calculated, int enforced, int nodes) {
        return new Receipt(ref, generation, "", 1, calculated, nodes, enforced, 0, -1, List.of(), nodes - enforced);
    }

    private List<EnforcedConditions.Due> sweep(long now, Receipt... receipts) {
        List<EnforcedConditions.Due> due = conditions.due(List.of(receipts), now, 10);
        due.forEach(d -> conditions.written(d.ref(), d.condition(), now));
        return due;
    }

    @Test
    void writtenOnChangeOnlyWithTheGeneration() {
        List<EnforcedConditions.Due> first = sweep(0, receipt(ANP, 3, false, 0, 2));
        assertThat(first).hasSize(1);
        assertThat(first.get(0).condition())
                .isEqualTo(new EnforcedConditions.Condition(
                        "False",
                        "NotCalculated",
                        "the control plane has not published the snapshots of this generation yet",
                        3));
        assertThat(sweep(S, receipt(ANP, 3, false, 0, 2))).as("nothing changed").isEmpty();

        List<EnforcedConditions.Due> lagging = sweep(2 * S, receipt(ANP, 3, true, 0, 2));
        assertThat(lagging.get(0).condition().reason()).isEqualTo("NodesLagging");
        assertThat(lagging.get(0).condition().message()).isEqualTo("enforced on 0 of 2 nodes");

        assertThat(sweep(3 * S, receipt(ANP, 3, true, 1, 2)))
                .as("N moving alone waits")
                .isEmpty();
        assertThat(sweep(40 * S, receipt(ANP, 3, true, 1, 2)))
                .as("...until the message interval passed")
                .hasSize(1);

        List<EnforcedConditions.Due> done = sweep(41 * S, receipt(ANP, 3, true, 2, 2));
        assertThat(done.get(0).condition().status()).isEqualTo("True");
        assertThat(done.get(0).condition().reason()).isEqualTo("Enforced");

        List<EnforcedConditions.Due> next = sweep(42 * S, receipt(ANP, 4, false, 0, 2));
        assertThat(next.get(0).condition().observedGeneration()).isEqualTo(4);
    }

    @Test
    void networkPoliciesHaveNoStatusAndTheBudgetTakesStateChangesFirst() {
        PolicyRef np = PolicyRef.networkPolicy("x", "a");
        sweep(0, receipt(ANP, 1, true, 0, 2), receipt(CNP, 1, true, 0, 2));
        List<EnforcedConditions.Due> due = conditions.due(
                List.of(receipt(ANP, 1, true, 1, 2), receipt(CNP, 1, true, 2, 2), receipt(np, 1, true, 2, 2)),
                100 * S,
                1);
        assertThat(due).extracting(EnforcedConditions.Due::ref).containsExactly(CNP);
    }

    @Test
    void aFailedWriteIsRetriedAfterABackoffAndAGonePolicyForgotten() {
        Receipt r = receipt(ANP, 1, true, 2, 2);
        assertThat(conditions.due(List.of(r), 0, 10)).hasSize(1);
        conditions.failed(ANP, 0);
        assertThat(conditions.due(List.of(r), S / 2, 10)).isEmpty();
        assertThat(conditions.due(List.of(r), S, 10)).hasSize(1);
        conditions.failed(ANP, S);
        assertThat(conditions.due(List.of(r), 2 * S, 10)).isEmpty();
        assertThat(conditions.due(List.of(r), 3 * S, 10)).hasSize(1);

        sweep(4 * S, r);
        assertThat(sweep(5 * S)).isEmpty(); // gone: forgotten
        assertThat(sweep(6 * S, r)).as("written again when it comes back").hasSize(1);
    }

    @Test
    void nodesReportingElsewhereMakeItUnknownNeverTrue() {
        Receipt oneOfTwo = receipt(ANP, 1, true, 1, 2);
        assertThat(EnforcedConditions.of(oneOfTwo, 1))
                .isEqualTo(new EnforcedConditions.Condition(
                        "Unknown",
                        "NodesReportElsewhere",
                        "enforced on 1 of 2 nodes; 1 not reporting to the writing control-plane replica",
                        1));
        assertThat(EnforcedConditions.of(receipt(ANP, 1, true, 0, 2), 1).reason())
                .as("a node reporting here lags")
                .isEqualTo("NodesLagging");
        assertThat(EnforcedConditions.of(receipt(ANP, 1, true, 2, 2), 0).status())
                .isEqualTo("True");
        List<EnforcedConditions.Due> due = conditions.due(List.of(oneOfTwo), r -> 1, 0, 10);
        assertThat(due).singleElement().extracting(d -> d.condition().status()).isEqualTo("Unknown");
    }
}
