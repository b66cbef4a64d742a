// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.kubeverdict.proto.v1.ActivePolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One policy version in {@link ClusterIndex} — a NetworkPolicy ({@link #compiled}) or an
 * admin-tier policy ({@link #admin}); exactly one is set: the endpoint pods it selects (its
 * {@link Selection}) and the IP sets it holds a reference on. Mutated by the index only.
 */
final class PolicyState {
    final CompiledPolicy compiled;
    final CompiledAdminPolicy admin;
    final String key;
    /** Null for a live policy; how it is staged otherwise (see {@link Staging}). */
    final Staging staging;

    private final ActivePolicy proto;
    /** The endpoint pods it selects, shared with the policies of the same selector (set by {@link Selections}). */
    Selection selection;

    final List<MemberSet> sets = new ArrayList<>();

    /** What {@link Staging#problem} found, beside the compiler's problems. */
    final List<PolicyProblem> stagingProblems;

    PolicyState(CompiledPolicy compiled, Staging staging, List<PolicyProblem> stagingProblems) {
        this.stagingProblems = stagingProblems;
        this.compiled = compiled;
        this.admin = null;
        this.staging = staging;
        this.key = staging == null ? compiled.key() : staging.key();
        this.proto = staging == null ? compiled.proto() : staging.rename(compiled.proto());
    }

    PolicyState(CompiledAdminPolicy admin, Staging staging, List<PolicyProblem> stagingProblems) {
        this.stagingProblems = stagingProblems;
        this.compiled = null;
        this.admin = admin;
        this.staging = staging;
        this.key = staging == null ? admin.key() : staging.key();
        this.proto = staging == null ? admin.proto() : staging.rename(admin.proto());
    }

    boolean staged() {
        return staging != null;
    }

    /** The nodes with at least one endpoint this policy selects. */
    Set<String> nodes() {
        return selection == null ? Set.of() : selection.nodes();
    }

    /** As sent: a staged policy's name carries the "staged:" prefix. */
    ActivePolicy proto() {
        return proto;
    }

    /** Whether the policy is listed for its selected endpoints' ingress (NetworkPolicy: isolates them). */
    boolean ingress() {
        return admin != null ? admin.ingress() : compiled.ingress();
    }

    boolean egress() {
        return admin != null ? admin.egress() : compiled.egress();
    }

    List<PolicyProblem> problems() {
        List<PolicyProblem> compiler = admin != null ? admin.problems() : compiled.problems();
        if (stagingProblems.isEmpty()) {
            return compiler;
        }
        List<PolicyProblem> all = new ArrayList<>(compiler);
        all.addAll(stagingProblems);
        return all;
    }
}
