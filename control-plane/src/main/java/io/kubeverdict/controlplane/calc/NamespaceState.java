// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * What {@link ClusterIndex} knows of one namespace: its labels, pods and policies, the IP sets
 * scoped to it (podSelector-only peers, ingress named ports), the namespace-selector IP sets
 * and the policy selections covering it, so a pod event only looks at the selections and sets of
 * its namespace. Mutated by the index only.
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
    /**
     * The policy selections covering it: its NetworkPolicies' and the admin-tier subjects' whose
     * namespace selector matches its labels (kept by {@link Selections}).
     */
    final Set<Selection> selections = new LinkedHashSet<>();

    NamespaceState(String name) {
        this.name = name;
        this.labels = Labels.namespace(name, Map.of());
    }

    /** Nothing refers to the namespace any more: the index may forget it. */
    boolean unused() {
        return !declared && pods.isEmpty() && policies.isEmpty() && fixedSets.isEmpty();
    }
}
