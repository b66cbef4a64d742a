// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.AdminPolicyReader;
import io.kubeverdict.controlplane.calc.NodeModel;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import java.util.List;

/**
 * The manifest kinds beyond namespaces, pods and NetworkPolicies: the admin-tier policies
 * (AdminNetworkPolicy, BaselineAdminNetworkPolicy, ClusterNetworkPolicy, read as generic objects)
 * and Nodes (whose labels and addresses {@code nodes} peers match, which address hostNetwork
 * pods, and whose pod ranges their snapshots carry: an invalid one is a warning, and left out).
 * Admin-tier policies are checked with the calculation's own reader at load time, so its
 * problems carry file and document. Objects of the group in another kind or version never get
 * here: {@link ManifestKinds} refuses them.
 */
final class AdminManifests {
    /** Where the loader keeps what this class accepts; keys as {@link LoadedManifests#originKey}. */
    interface Sink {
        void adminPolicy(String key, GenericKubernetesResource policy, Origin origin);

        void node(String key, Node node, Origin origin);

        void problem(ManifestProblem problem);
    }

    private AdminManifests() {}

    /** Takes a named Node, or an admin-tier policy of a kind and version {@link ManifestKinds} reads. */
    static void accept(Origin origin, HasMetadata object, Sink sink) {
        if (object instanceof Node node) {
            String name = node.getMetadata().getName();
            NodeModel.podCidrProblems(node)
                    .forEach(p -> sink.problem(new ManifestProblem(origin, "Node " + name + ": " + p)));
            sink.node(LoadedManifests.originKey("Node", null, node.getMetadata().getName()), node, origin);
            return;
        }
        GenericKubernetesResource g = (GenericKubernetesResource) object;
        AdminPolicyKind kind = AdminPolicyKind.of(g.getApiVersion(), g.getKind());
        if (kind == null) { // ManifestKinds refuses these before: a caller's bug, never a silent skip
            throw new IllegalArgumentException(
                    "not an admin-tier policy kind read: " + g.getApiVersion() + " " + g.getKind());
        }
        List<PolicyProblem> problems = AdminPolicyReader.read(g).problems();
        problems.forEach(p -> sink.problem(new ManifestProblem(origin, p.toString())));
        sink.adminPolicy(
                LoadedManifests.originKey(kind.kind(), null, g.getMetadata().getName()), g, origin);
    }
}
