// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.controlplane.calc.PolicyProblem;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * TEST DOUBLE for the service tests only, standing in for the engine's calculator: it evaluates
 * no policy at all. Every pod with a node and an IP becomes an endpoint of its node (no tiers);
 * policies (of every kind) are only counted, and one named "bad" is reported as a problem. Enough to show that
 * events travel from the sources through the event thread to agents; the policy semantics are the
 * engine's and are tested there.
 */
public class TestDoubleCalculator implements PolicyCalculator {
    private final Map<String, Pod> pods = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final Map<String, AdminPolicyKind> adminPolicies = new TreeMap<>();
    private final Set<String> changed = new HashSet<>();
    private final Set<String> nodeObjects = new HashSet<>();
    private final List<String> log = new ArrayList<>();
    /** What happened, in order ("pod+ns/name", "np-ns/name", ...). */
    public List<String> log() {
        return log;
    }

    /** Which thread applied each change (the loop must use exactly one). */
    public final Set<String> threads = new HashSet<>();

    @Override
    public void upsertNamespace(Namespace namespace) {
        record("ns+" + namespace.getMetadata().getName());
    }

    @Override
    public void deleteNamespace(String name) {
        record("ns-" + name);
    }

    @Override
    public void upsertPod(Pod pod) {
        record("pod+" + pod.getMetadata().getNamespace() + "/"
                + pod.getMetadata().getName());
        Pod old = pods.put(
                pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(), pod);
        touch(old);
        touch(pod);
    }

    @Override
    public void deletePod(String namespace, String name) {
        record("pod-" + namespace + "/" + name);
        touch(pods.remove(namespace + "/" + name));
    }

    @Override
    public void upsertPolicy(NetworkPolicy policy) {
        record("np+" + policy.getMetadata().getNamespace() + "/"
                + policy.getMetadata().getName());
        policies.put(
                policy.getMetadata().getNamespace() + "/" + policy.getMetadata().getName(), policy);
    }

    @Override
    public void deletePolicy(String namespace, String name) {
        record("np-" + namespace + "/" + name);
        policies.remove(namespace + "/" + name);
    }

    @Override
    public void upsertAdminPolicy(GenericKubernetesResource policy) {
        AdminPolicyKind kind = AdminPolicyKind.of(policy.getApiVersion(), policy.getKind());
        record(kind.shortName() + "+" + policy.getMetadata().getName());
        adminPolicies.put(policy.getMetadata().getName(), kind);
    }

    @Override
    public void deleteAdminPolicy(AdminPolicyKind kind, String name) {
        record(kind.shortName() + "-" + name);
        adminPolicies.remove(name);
    }

    @Override
    public void upsertNode(Node node) {
        record("node+" + node.getMetadata().getName());
        nodeObjects.add(node.getMetadata().getName());
    }

    @Override
    public void deleteNode(String name) {
        record("node-" + name);
        nodeObjects.remove(name);
    }

    private void record(String s) {
        log.add(s);
        threads.add(Thread.currentThread().getName());
    }

    private void touch(Pod p) {
        if (p != null && p.getSpec() != null && p.getSpec().getNodeName() != null) {
            changed.add(p.getSpec().getNodeName());
        }
    }

    @Override
    public Set<String> clusterNodes() {
        Set<String> out = new HashSet<>(nodeObjects);
        out.addAll(nodes());
        return Set.copyOf(out);
    }

    @Override
    public Set<String> nodes() {
        Set<String> out = new HashSet<>();
        pods.values().forEach(p -> {
            if (p.getSpec() != null && p.getSpec().getNodeName() != null) {
                out.add(p.getSpec().getNodeName());
            }
        });
        return out;
    }

    @Override
    public NodeSnapshot snapshot(String node) {
        NodeSnapshot.Builder b = NodeSnapshot.newBuilder().setNode(node);
        for (Pod p : pods.values()) {
            if (p.getSpec() == null
                    || !node.equals(p.getSpec().getNodeName())
                    || p.getStatus() == null
                    || p.getStatus().getPodIP() == null) {
                continue;
            }
            WorkloadEndpoint.Builder we =
                    WorkloadEndpoint.newBuilder().addIps(p.getStatus().getPodIP());
            if (p.getMetadata().getLabels() != null) {
                we.putAllLabels(p.getMetadata().getLabels());
            }
            b.addEndpoints(Endpoint.newBuilder()
                    .setId(EndpointId.newBuilder()
                            .setNamespace(p.getMetadata().getNamespace())
                            .setPod(p.getMetadata().getName()))
                    .setEndpoint(we));
        }
        return b.build();
    }

    @Override
    public Set<String> drainChangedNodes() {
        Set<String> out = new HashSet<>(changed);
        changed.clear();
        return out;
    }

    @Override
    public List<PolicyProblem> problems() {
        List<PolicyProblem> out = new ArrayList<>();
        policies.forEach((k, v) -> {
            if (v.getMetadata().getName().equals("bad")) {
                out.add(new PolicyProblem(v.getMetadata().getNamespace(), "bad", "spec", "test problem"));
            }
        });
        adminPolicies.forEach((name, kind) -> {
            if (name.equals("bad")) {
                out.add(PolicyProblem.of(kind, "bad", "spec", "test problem"));
            }
        });
        return out;
    }
}
