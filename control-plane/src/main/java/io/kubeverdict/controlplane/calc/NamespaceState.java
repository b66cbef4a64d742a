// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What {@link ClusterIndex} knows of one namespace: its labels, pods and policies, the IP sets
 * scoped to it (podSelector-only peers, ingress named ports), the namespace-selector IP sets
 * and the admin-tier policies whose namespace selector matches its labels, so a pod event only
 * looks at the policies and sets of its namespace. Mutated by the index only.
 */
final class NamespaceState {
    final String name;
    Map<String, String> labels;
    /** Seen as a Namespace object (not only through the pods or policies in it). */
    boolean declared;

    final Map<String, PodModel> pods = new HashMap<>();
    final Set<PolicyState> policies = new LinkedHashSet<>();
    final Set<IpSetState> fixedSets = new LinkedHashSet<>();
    final Set<IpSetState> selectorSets = new LinkedHashSet<>();
    /** The admin-tier policies whose subject's namespace selector matches this namespace's labels. */
    final Set<PolicyState> adminPolicies = new LinkedHashSet<>();

    NamespaceState(String name) {
        this.name = name;
        this.labels = Labels.namespace(name, Map.of());
    }

    /**
     * The keys of the policies that select an endpoint pod of this namespace: its own
     * NetworkPolicies and the admin-tier policies covering it whose pod selector matches.
     */
    TreeSet<String> policiesSelecting(PodModel pod) {
        TreeSet<String> out = new TreeSet<>();
        for (PolicyState p : policies) {
            if (p.compiled.podSelector().matches(pod.labels())) {
                out.add(p.key);
            }
        }
        for (PolicyState p : adminPolicies) {
            if (p.admin.subject().pods().matches(pod.labels())) {
                out.add(p.key);
            }
        }
        return out;
    }

    /** Nothing refers to the namespace any more: the index may forget it. */
    boolean unused() {
        return !declared && pods.isEmpty() && policies.isEmpty() && fixedSets.isEmpty();
    }
}
