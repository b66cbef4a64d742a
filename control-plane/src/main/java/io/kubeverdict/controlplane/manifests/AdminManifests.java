package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.AdminPolicyReader;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import java.util.List;

/**
 * The manifest kinds beyond namespaces, pods and NetworkPolicies: the admin-tier policies
 * (AdminNetworkPolicy, BaselineAdminNetworkPolicy, ClusterNetworkPolicy, read as generic objects)
 * and Nodes (whose labels and addresses {@code nodes} peers match, and which address hostNetwork
 * pods). Admin-tier policies are checked with the calculation's own reader at load time, so its
 * problems carry file and document; an object of the group in a version the engine does not
 * implement is reported and ignored.
 */
final class AdminManifests {
    /** Where the loader keeps what this class accepts; keys as {@link LoadedManifests#originKey}. */
    interface Sink {
        void adminPolicy(String key, GenericKubernetesResource policy, Origin origin);

        void node(String key, Node node, Origin origin);

        void problem(ManifestProblem problem);
    }

    private AdminManifests() {}

    /** Whether the object is a Node or of the policy.networking.k8s.io group. */
    static boolean handles(HasMetadata object) {
        return object instanceof Node || (object instanceof GenericKubernetesResource g && g.getApiVersion() != null
                && g.getApiVersion().startsWith(AdminPolicyKind.GROUP + "/"));
    }

    /** Takes a named object that {@link #handles} accepts. */
    static void accept(Origin origin, HasMetadata object, Sink sink) {
        if (object instanceof Node node) {
            sink.node(LoadedManifests.originKey("Node", null, node.getMetadata().getName()), node, origin);
            return;
        }
        GenericKubernetesResource g = (GenericKubernetesResource) object;
        AdminPolicyKind kind = AdminPolicyKind.of(g.getApiVersion(), g.getKind());
        if (kind == null) {
            AdminPolicyKind other = AdminPolicyKind.byKindName(g.getKind());
            sink.problem(new ManifestProblem(origin, "unsupported " + g.getApiVersion() + " " + g.getKind()
                    + (other == null ? "" : " (the engine reads " + other.apiVersion() + ")") + "; ignored"));
            return;
        }
        List<PolicyProblem> problems = AdminPolicyReader.read(g).problems();
        problems.forEach(p -> sink.problem(new ManifestProblem(origin, p.toString())));
        sink.adminPolicy(LoadedManifests.originKey(kind.kind(), null, g.getMetadata().getName()), g, origin);
    }
}
