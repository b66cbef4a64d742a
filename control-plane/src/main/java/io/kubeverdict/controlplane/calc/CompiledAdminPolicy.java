// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.controlplane.calc.AdminPolicy.Subject;
import io.kubeverdict.controlplane.calc.AdminPolicy.Tier;
import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.Comparator;
import java.util.List;

/**
 * An admin-tier policy translated to the contract; built once per policy version (set ids come
 * from content).
 *
 * @param ingress whether it has ingress rules (only then is it listed for its subjects' ingress)
 * @param egress whether it has egress rules
 * @param ipSets the pod sets its rules refer to, distinct
 * @param nodeSets the node-address sets its rules refer to, distinct
 * @param domainWatches the domainNames peers of its (egress) rules, distinct: its subjects watch
 *     the DNS answers they receive for them
 */
public record CompiledAdminPolicy(
        AdminPolicyKind kind,
        String name,
        Tier tier,
        int priority,
        Subject subject,
        boolean ingress,
        boolean egress,
        ActivePolicy proto,
        List<IpSetDef> ipSets,
        List<NodeSetDef> nodeSets,
        List<io.kubeverdict.proto.v1.DomainNames> domainWatches,
        List<PolicyProblem> problems) {

    /**
     * Evaluation order within a tier: priority (lower first), then name, then kind
     * (v1alpha1 before v1alpha2) — deterministic for equal priorities, which upstream leaves open.
     */
    public static final Comparator<CompiledAdminPolicy> ORDER = Comparator.comparingInt(CompiledAdminPolicy::priority)
            .thenComparing(CompiledAdminPolicy::name)
            .thenComparing(CompiledAdminPolicy::kind);

    public String key() {
        return AdminPolicy.key(kind, name);
    }

    /** The snapshot's tier name. */
    public String tierName() {
        return tier == Tier.ADMIN ? AdminPolicyCompiler.ADMIN_TIER : AdminPolicyCompiler.BASELINE_TIER;
    }
}
