// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import java.util.Collection;
import java.util.List;

/**
 * A whole cluster as objects, every kind the calculation reads.
 *
 * @param adminPolicies AdminNetworkPolicies, BaselineAdminNetworkPolicies and ClusterNetworkPolicies
 */
public record ClusterObjects(
        Collection<Namespace> namespaces,
        Collection<Pod> pods,
        Collection<NetworkPolicy> policies,
        Collection<GenericKubernetesResource> adminPolicies,
        Collection<Node> nodes) {

    public static ClusterObjects of(
            Collection<Namespace> namespaces, Collection<Pod> pods, Collection<NetworkPolicy> policies) {
        return new ClusterObjects(namespaces, pods, policies, List.of(), List.of());
    }

    /** Hands every object to a calculator (kinds in a fixed order; the result does not depend on it). */
    public <C extends PolicyCalculator> C feed(C calc) {
        nodes.forEach(calc::upsertNode);
        namespaces.forEach(calc::upsertNamespace);
        pods.forEach(calc::upsertPod);
        policies.forEach(calc::upsertPolicy);
        adminPolicies.forEach(calc::upsertAdminPolicy);
        return calc;
    }
}
