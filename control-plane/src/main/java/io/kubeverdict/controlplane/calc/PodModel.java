// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The part of a Pod the calculation uses, immutable and comparable by value so an update that
 * changes nothing relevant (status conditions, annotations) costs nothing.
 *
 * @param ips canonical addresses, in the order the pod reports them (podIPs, else podIP)
 * @param endpoint whether the pod is an endpoint: scheduled, has addresses, not hostNetwork and
 *     not terminal ({@link #live}). Only endpoints are selected by policies and are members of
 *     IP sets.
 * @param key "namespace/name", made once: the indexes keep it per pod and per selecting policy
 */
public record PodModel(
        String namespace,
        String name,
        Map<String, String> labels,
        String node,
        List<String> ips,
        boolean endpoint,
        List<NamedPort> namedPorts,
        String key) {

    public record NamedPort(String name, Protocol protocol, int port) {}

    public static PodModel of(Pod pod) {
        return of(pod, UnaryOperator.identity());
    }

    /** The pod, its namespace and node names as {@code names} gives them (one instance per name). */
    static PodModel of(Pod pod, UnaryOperator<String> names) {
        String ns = names.apply(
                pod.getMetadata().getNamespace() == null
                        ? "default"
                        : pod.getMetadata().getNamespace());
        Map<String, String> labels = Labels.copy(pod.getMetadata().getLabels());
        String node = pod.getSpec() == null
                ? null
                : names.apply(emptyToNull(pod.getSpec().getNodeName()));
        boolean hostNetwork =
                pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork());
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        List<String> ips = addresses(pod);
        boolean endpoint = node != null && !hostNetwork && live(phase) && !ips.isEmpty();
        String name = pod.getMetadata().getName();
        return new PodModel(ns, name, labels, node, ips, endpoint, namedPorts(pod), ns + "/" + name);
    }

    /** The same pod with only these of its addresses (an endpoint only while it has one). */
    public PodModel withIps(List<String> kept) {
        if (kept.equals(ips)) {
            return this;
        }
        return new PodModel(
                namespace, name, labels, node, List.copyOf(kept), endpoint && !kept.isEmpty(), namedPorts, key);
    }

    /**
     * Whether a pod in this phase may still send or receive: every phase but Succeeded and Failed.
     * A Pending pod has its address while its init containers and sidecars run, and policy must
     * cover them; Unknown (its node unreachable) and a phase not yet written may still run. A
     * terminal pod's address goes back to the pool, and another pod may already have it.
     */
    public static boolean live(String phase) {
        return !"Succeeded".equals(phase) && !"Failed".equals(phase);
    }

    private static List<String> addresses(Pod pod) {
        if (pod.getStatus() == null) {
            return List.of();
        }
        Set<String> out = new LinkedHashSet<>();
        List<PodIP> podIPs = pod.getStatus().getPodIPs();
        if (podIPs != null) {
            for (PodIP ip : podIPs) {
                if (ip != null) {
                    IpAddress.canonical(ip.getIp()).ifPresent(out::add);
                }
            }
        }
        if (out.isEmpty()) {
            IpAddress.canonical(pod.getStatus().getPodIP()).ifPresent(out::add);
        }
        return List.copyOf(out);
    }

    private static List<NamedPort> namedPorts(Pod pod) {
        if (pod.getSpec() == null) {
            return List.of();
        }
        List<NamedPort> out = new ArrayList<>();
        // Init containers (sidecars) can serve too; Kubernetes resolves named ports across them.
        List<List<Container>> groups = new ArrayList<>();
        groups.add(pod.getSpec().getContainers());
        groups.add(pod.getSpec().getInitContainers());
        for (List<Container> containers : groups) {
            if (containers == null) {
                continue;
            }
            for (Container c : containers) {
                if (c == null || c.getPorts() == null) {
                    continue;
                }
                for (ContainerPort p : c.getPorts()) {
                    if (p == null) {
                        continue; // a null list item (`ports: [~]` in a manifest) names no port
                    }
                    Protocol proto = Protocols.parse(p.getProtocol());
                    if (p.getName() != null
                            && !p.getName().isEmpty()
                            && proto != null
                            && p.getContainerPort() != null
                            && p.getContainerPort() > 0
                            && p.getContainerPort() <= 65535) {
                        out.add(new NamedPort(p.getName(), proto, p.getContainerPort()));
                    }
                }
            }
        }
        return List.copyOf(out);
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
