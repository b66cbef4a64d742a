// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JsonPointer;

/**
 * Fields the model does not know (fabric8 keeps them aside as "additional properties" instead of
 * failing), in the parts of an object the calculation reads. A misspelt field there silently
 * changes meaning, and can widen: "ipBlock.exept" drops the exceptions, "metadata.namespce" moves
 * a policy or a pod to namespace "default". Such fields are load errors in metadata and in a
 * NetworkPolicy's spec (a small, stable API); in a Pod's spec and status (which grow with every
 * Kubernetes release) they are warnings.
 */
final class UnknownFields {
    private final List<JsonPointer> found = new ArrayList<>();

    private UnknownFields() {}

    /** Unknown fields of the object's metadata and, for a NetworkPolicy, its spec. */
    static List<JsonPointer> errors(ObjectMeta metadata, NetworkPolicy policyOrNull) {
        UnknownFields u = new UnknownFields();
        JsonPointer root = JsonPointer.empty();
        if (metadata != null) {
            u.extra(metadata.getAdditionalProperties(), root.appendProperty("metadata"));
        }
        if (policyOrNull != null && policyOrNull.getSpec() != null) {
            u.policySpec(policyOrNull.getSpec(), root.appendProperty("spec"));
        }
        return u.found;
    }

    /** Unknown fields of a Pod's spec, containers' ports and status: the parts endpoints are made of. */
    static List<JsonPointer> warnings(Pod pod) {
        UnknownFields u = new UnknownFields();
        JsonPointer root = JsonPointer.empty();
        if (pod.getSpec() != null) {
            JsonPointer spec = root.appendProperty("spec");
            u.extra(pod.getSpec().getAdditionalProperties(), spec);
            u.each(pod.getSpec().getContainers(), spec.appendProperty("containers"), (c, at) -> u.container(c, at));
        }
        if (pod.getStatus() != null) {
            JsonPointer status = root.appendProperty("status");
            u.extra(pod.getStatus().getAdditionalProperties(), status);
            u.each(
                    pod.getStatus().getPodIPs(),
                    status.appendProperty("podIPs"),
                    (PodIP ip, JsonPointer at) -> u.extra(ip.getAdditionalProperties(), at));
        }
        return u.found;
    }

    private void container(Container c, JsonPointer at) {
        each(
                c.getPorts(),
                at.appendProperty("ports"),
                (ContainerPort p, JsonPointer pat) -> extra(p.getAdditionalProperties(), pat));
    }

    private void policySpec(NetworkPolicySpec spec, JsonPointer at) {
        extra(spec.getAdditionalProperties(), at);
        selector(spec.getPodSelector(), at.appendProperty("podSelector"));
        each(spec.getIngress(), at.appendProperty("ingress"), (NetworkPolicyIngressRule r, JsonPointer rat) -> {
            extra(r.getAdditionalProperties(), rat);
            each(r.getFrom(), rat.appendProperty("from"), this::peer);
            each(r.getPorts(), rat.appendProperty("ports"), this::port);
        });
        each(spec.getEgress(), at.appendProperty("egress"), (NetworkPolicyEgressRule r, JsonPointer rat) -> {
            extra(r.getAdditionalProperties(), rat);
            each(r.getTo(), rat.appendProperty("to"), this::peer);
            each(r.getPorts(), rat.appendProperty("ports"), this::port);
        });
    }

    private void peer(NetworkPolicyPeer p, JsonPointer at) {
        extra(p.getAdditionalProperties(), at);
        selector(p.getPodSelector(), at.appendProperty("podSelector"));
        selector(p.getNamespaceSelector(), at.appendProperty("namespaceSelector"));
        if (p.getIpBlock() != null) {
            extra(p.getIpBlock().getAdditionalProperties(), at.appendProperty("ipBlock"));
        }
    }

    private void port(NetworkPolicyPort p, JsonPointer at) {
        extra(p.getAdditionalProperties(), at);
    }

    private void selector(LabelSelector s, JsonPointer at) {
        if (s != null) {
            extra(s.getAdditionalProperties(), at);
            each(
                    s.getMatchExpressions(),
                    at.appendProperty("matchExpressions"),
                    (LabelSelectorRequirement r, JsonPointer rat) -> extra(r.getAdditionalProperties(), rat));
        }
    }

    private interface Visit<T> {
        void accept(T item, JsonPointer at);
    }

    private <T> void each(List<T> items, JsonPointer at, Visit<T> visit) {
        if (items != null) {
            for (int i = 0; i < items.size(); i++) {
                if (items.get(i) != null) {
                    visit.accept(items.get(i), at.appendIndex(i));
                }
            }
        }
    }

    private void extra(Map<String, Object> additional, JsonPointer at) {
        if (additional != null) {
            additional.keySet().stream().sorted().forEach(k -> found.add(at.appendProperty(k)));
        }
    }
}
