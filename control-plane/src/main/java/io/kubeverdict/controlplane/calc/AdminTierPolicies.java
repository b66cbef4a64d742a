// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The admin-tier policies of {@link ClusterIndex} (cluster-scoped; also in its policy map): which
 * namespaces each covers and the pods it selects there, kept as policies, namespaces and their
 * labels change. Shares the index's parts; one part of its coordination, no state of its own but
 * the list of admin-tier policies.
 */
final class AdminTierPolicies {
    private final Set<PolicyState> adminPolicies = new LinkedHashSet<>();
    private final Namespaces namespaces;
    private final Map<String, PolicyState> policies;
    private final SetReferences sets;
    private final Selections selections;
    private final Map<String, PodModel> pods;
    private final Consumer<PolicyState> stagedAdded;
    private final Consumer<PolicyState> stagedRemoved;

    AdminTierPolicies(
            Namespaces namespaces,
            Map<String, PolicyState> policies,
            SetReferences sets,
            Selections selections,
            Map<String, PodModel> pods,
            Consumer<PolicyState> stagedAdded,
            Consumer<PolicyState> stagedRemoved) {
        this.namespaces = namespaces;
        this.policies = policies;
        this.sets = sets;
        this.selections = selections;
        this.pods = pods;
        this.stagedAdded = stagedAdded;
        this.stagedRemoved = stagedRemoved;
    }

    boolean isEmpty() {
        return adminPolicies.isEmpty();
    }

    /** A namespace new to the index is covered by the admin-tier policies whose namespace selectors match it. */
    void coverNew(NamespaceState st) {
        for (PolicyState p : adminPolicies) {
            if (p.admin.subject().namespaces().matches(st.labels)) {
                st.adminPolicies.add(p);
            }
        }
    }

    /** A namespace's labels changed (already set): policies start or stop covering it. */
    void relabelled(NamespaceState st) {
        for (PolicyState p : adminPolicies) {
            boolean was = st.adminPolicies.contains(p);
            boolean now = p.admin.subject().namespaces().matches(st.labels);
            if (was != now) {
                if (now) {
                    st.adminPolicies.add(p);
                    selectInNamespace(p, st, sharesPriority(p));
                } else {
                    st.adminPolicies.remove(p);
                    unselectInNamespace(p, st);
                }
            }
        }
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
        adminPolicies.add(p);
        boolean counted = sharesPriority(p);
        for (NamespaceState st : namespaces.all()) {
            if (compiled.subject().namespaces().matches(st.labels)) {
                st.adminPolicies.add(p);
                selectInNamespace(p, st, counted);
            }
        }
        stagedAdded.accept(p);
    }

    /**
     * Whether another admin-tier policy of p's tier has p's priority: only then can p be in a
     * pair {@link PriorityOverlaps} counts (the count of a pair is kept by whichever of the two
     * comes second, and dropped by whichever goes first, so skipping is exact).
     */
    private boolean sharesPriority(PolicyState p) {
        for (PolicyState q : adminPolicies) {
            if (q != p
                    && q.staged() == p.staged()
                    && q.admin.tier() == p.admin.tier()
                    && q.admin.priority() == p.admin.priority()) {
                return true;
            }
        }
        return false;
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
        adminPolicies.remove(old);
        for (NamespaceState st : namespaces.all()) {
            st.adminPolicies.remove(old);
        }
        selections.dropAll(old, sharesPriority(old), pods);
        for (MemberSet set : old.sets) {
            sets.release(set, old);
        }
    }

    /** An admin-tier policy now covers a namespace: it selects the endpoints there its pod selector matches. */
    private void selectInNamespace(PolicyState p, NamespaceState st, boolean counted) {
        for (PodModel pod : st.pods.values()) {
            if (pod.endpoint() && p.admin.subject().pods().matches(pod.labels())) {
                selections.add(p, pod, counted);
            }
        }
    }

    /** An admin-tier policy no longer covers a namespace. */
    private void unselectInNamespace(PolicyState p, NamespaceState st) {
        boolean counted = sharesPriority(p);
        for (PodModel pod : st.pods.values()) {
            if (p.selected.contains(pod.key())) {
                selections.remove(p, pod, counted);
            }
        }
    }
}
