// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.util.List;
import java.util.Map;

/**
 * The objects of a manifest directory that loaded, each kind sorted by namespace/name, with where
 * each came from (keyed "Kind namespace/name") and warnings about what was used otherwise than
 * written (replaced duplicates, narrowed policy parts). {@code adminPolicies} are the admin-tier
 * policies (see {@code AdminPolicyKind}) as generic objects, by kind and name; {@code skipped}
 * counts the objects of kinds not read.
 */
public record LoadedManifests(
        List<Namespace> namespaces,
        List<Pod> pods,
        List<NetworkPolicy> policies,
        Map<String, Origin> origins,
        List<ManifestProblem> problems,
        List<GenericKubernetesResource> adminPolicies,
        List<Node> nodes,
        SkippedKinds skipped) {

    public static String originKey(String kind, String namespace, String name) {
        return kind + " " + (namespace == null ? "" : namespace + "/") + name;
    }
}
