// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One policy version in {@link ClusterIndex} — a NetworkPolicy ({@link #compiled}) or an
 * admin-tier policy ({@link #admin}); exactly one is set: the endpoint pods it selects, how many
 * of them per node, and the IP sets it holds a reference on. Mutated by the index only.
 */
final class PolicyState {
    final CompiledPolicy compiled;
    final CompiledAdminPolicy admin;
    final String key;
    final Set<String> selected = new HashSet<>();
    final Map<String, Integer> nodeCounts = new HashMap<>();
    final List<MemberSet> sets = new ArrayList<>();

    PolicyState(CompiledPolicy compiled) {
        this.compiled = compiled;
        this.admin = null;
        this.key = compiled.key();
    }

    PolicyState(CompiledAdminPolicy admin) {
        this.compiled = null;
        this.admin = admin;
        this.key = admin.key();
    }

    /** The nodes with at least one endpoint this policy selects. */
    Set<String> nodes() {
        return nodeCounts.keySet();
    }

    ActivePolicy proto() {
        return admin != null ? admin.proto() : compiled.proto();
    }

    /** Whether the policy is listed for its selected endpoints' ingress (NetworkPolicy: isolates them). */
    boolean ingress() {
        return admin != null ? admin.ingress() : compiled.ingress();
    }

    boolean egress() {
        return admin != null ? admin.egress() : compiled.egress();
    }

    List<PolicyProblem> problems() {
        return admin != null ? admin.problems() : compiled.problems();
    }
}
