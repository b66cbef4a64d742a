// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The admin-tier policies of {@link ClusterIndex} (cluster-scoped; in its policy map): a version
 * compiled, its sets acquired and its subject's selection joined, the version it replaces removed.
 * The pods a subject selects, across namespaces and their labels, are {@link Selections}' (one
 * selection per distinct subject). Shares the index's parts; one part of its coordination, no
 * state of its own.
 */
final class AdminTierPolicies {
    private final Map<String, PolicyState> policies;
    private final SetReferences sets;
    private final Selections selections;
    private final Consumer<PolicyState> stagedAdded;
    private final Consumer<PolicyState> stagedRemoved;

    AdminTierPolicies(
            Map<String, PolicyState> policies,
            SetReferences sets,
            Selections selections,
            Consumer<PolicyState> stagedAdded,
            Consumer<PolicyState> stagedRemoved) {
        this.policies = policies;
        this.sets = sets;
        this.selections = selections;
        this.stagedAdded = stagedAdded;
        this.stagedRemoved = stagedRemoved;
    }

    /** An admin-tier policy; its metadata says whether it is staged (null: live). */
    void upsert(AdminPolicy policy, ObjectMeta meta) {
        CompiledAdminPolicy compiled = AdminPolicyCompiler.compile(policy);
        Staging staging = Staging.of(meta, compiled.key(), n -> AdminPolicy.key(policy.kind(), n));
        String annotationProblem = Staging.problem(meta);
        List<PolicyProblem> stagingProblems = annotationProblem == null
                ? List.of()
                : List.of(PolicyProblem.of(policy.kind(), policy.name(), "metadata.annotations", annotationProblem));
        String key = staging == null ? compiled.key() : staging.key();
        PolicyState old = policies.get(key);
        if (old != null
                && compiled.equals(old.admin)
                && Objects.equals(old.staging, staging)
                && old.stagingProblems.equals(stagingProblems)) {
            return;
        }
        PolicyState p = new PolicyState(compiled, staging, stagingProblems);
        // New references first, so sets shared with the old version survive.
        for (IpSetDef def : compiled.ipSets()) {
            p.sets.add(sets.acquire(def, p));
        }
        for (NodeSetDef def : compiled.nodeSets()) {
            p.sets.add(sets.acquireNodes(def, p));
        }
        policies.put(p.key, p);
        if (old != null) {
            remove(old);
        }
        PolicyState otherForm = policies.remove(staging == null ? Staging.PREFIX + compiled.key() : compiled.key());
        if (otherForm != null) {
            remove(otherForm);
        }
        selections.acquire(p, scope(compiled.subject()));
        stagedAdded.accept(p);
    }

    /** The subject's pods as a selection scope: the content of an IP set of the same pods. */
    private static IpSetDef scope(AdminPolicy.Subject subject) {
        return IpSetDef.podsInNamespaces(subject.namespaces(), subject.pods());
    }

    void delete(AdminPolicyKind kind, String name) {
        for (String key : List.of(AdminPolicy.key(kind, name), Staging.PREFIX + AdminPolicy.key(kind, name))) {
            PolicyState old = policies.remove(key);
            if (old != null) {
                remove(old);
            }
        }
    }

    private void remove(PolicyState old) {
        stagedRemoved.accept(old);
        selections.release(old);
        for (MemberSet set : old.sets) {
            sets.release(set, old);
        }
    }
}
