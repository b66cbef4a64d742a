// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * A deliberately naive evaluator of the three tiers, written from the network-policy-api
 * documentation and working on the raw objects (the spec maps) directly: for each direction, the
 * admin tier (AdminNetworkPolicies and Admin ClusterNetworkPolicies selecting the pod, by
 * priority, then name, then kind — the order the engine documents for ties), first matching rule
 * decides (Allow/Accept, Deny, Pass to the next tier); then NetworkPolicy ({@link ReferenceEvaluator});
 * then the baseline tier (Baseline ClusterNetworkPolicies by priority, then the
 * BaselineAdminNetworkPolicy), first match; else allowed. A rule with a peer that has no field,
 * an unparsable CIDR, or a named port next to a nodes/networks peer fails closed as upstream
 * says: an Allow matches nothing, a Deny or Pass denies all. Priorities above 1000 count as 1000.
 * Shares no code with the engine's reader or compiler.
 */
final class AdminReferenceEvaluator extends ReferenceEvaluator {
    private static final KubernetesSerialization JSON = new KubernetesSerialization();

    private record Policy(int kindOrder, String name, boolean admin, int priority, Map<?, ?> spec) {}

    private enum Outcome {
        ALLOW,
        DENY,
        PASS,
        NONE
    }

    private final List<Policy> adminTier = new ArrayList<>();
    private final List<Policy> baselineTier = new ArrayList<>();
    private final List<Node> nodes;

    AdminReferenceEvaluator(
            List<Namespace> namespaces,
            List<Pod> pods,
            List<NetworkPolicy> policies,
            List<GenericKubernetesResource> adminPolicies,
            List<Node> nodes) {
        super(namespaces, pods, policies);
        this.nodes = nodes;
        for (Node n : nodes) {
            for (NodeAddress a : n.getStatus().getAddresses()) {
                if (a.getType().endsWith("IP")) {
                    nodeAddress(n.getMetadata().getName(), a.getAddress());
                }
            }
        }
        for (GenericKubernetesResource g : adminPolicies) {
            Map<?, ?> spec = (Map<?, ?>) g.getAdditionalProperties().get("spec");
            String name = g.getMetadata().getName();
            switch (g.getKind()) {
                case "AdminNetworkPolicy" -> adminTier.add(new Policy(0, name, true, priority(spec), spec));
                case "BaselineAdminNetworkPolicy" -> baselineTier.add(new Policy(1, name, false, 1001, spec));
                default ->
                    ("Admin".equals(spec.get("tier")) ? adminTier : baselineTier)
                            .add(new Policy(2, name, "Admin".equals(spec.get("tier")), priority(spec), spec));
            }
        }
        Comparator<Policy> order = Comparator.comparingInt(Policy::priority)
                .thenComparing(Policy::name)
                .thenComparingInt(Policy::kindOrder);
        adminTier.sort(order);
        baselineTier.sort(order);
    }

    private static int priority(Map<?, ?> spec) {
        return Math.min(1000, ((Number) spec.get("priority")).intValue());
    }

    @Override
    boolean verdict(Pod local, boolean egress, Pod remote, String remoteIp, Pod dst, String protocol, int port) {
        switch (firstMatch(adminTier, local, egress, remote, remoteIp, dst, protocol, port)) {
            case ALLOW:
                return true;
            case DENY:
                return false;
            default:
                break;
        }
        Boolean np = networkPolicies(local, egress, remote, remoteIp, dst, protocol, port);
        if (np != null) {
            return np;
        }
        return firstMatch(baselineTier, local, egress, remote, remoteIp, dst, protocol, port) != Outcome.DENY;
    }

    private Outcome firstMatch(
            List<Policy> tier,
            Pod local,
            boolean egress,
            Pod remote,
            String remoteIp,
            Pod dst,
            String protocol,
            int port) {
        for (Policy p : tier) {
            if (!subject(p.spec().get("subject"), local)) {
                continue;
            }
            List<?> rules = (List<?>) p.spec().get(egress ? "egress" : "ingress");
            for (Object o : rules == null ? List.of() : rules) {
                Map<?, ?> rule = (Map<?, ?>) o;
                String action = (String) rule.get("action");
                Outcome written =
                        action.equals("Deny") ? Outcome.DENY : action.equals("Pass") ? Outcome.PASS : Outcome.ALLOW;
                List<?> peers = (List<?>) rule.get(egress ? "to" : "from");
                List<?> ports = (List<?>) (rule.containsKey("protocols") ? rule.get("protocols") : rule.get("ports"));
                if (invalid(peers, ports, written)) {
                    if (written == Outcome.ALLOW) {
                        continue; // fails closed: matches no traffic
                    }
                    return Outcome.DENY; // fails closed: "Deny all"
                }
                if (anyPeer(peers, remote, remoteIp) && anyPort(ports, dst, protocol, port)) {
                    return written;
                }
            }
        }
        return Outcome.NONE;
    }

    private static boolean invalid(List<?> peers, List<?> ports, Outcome written) {
        boolean nonPodPeer = false;
        for (Object o : peers) {
            Map<?, ?> peer = (Map<?, ?>) o;
            if (peer.isEmpty()) {
                return true;
            }
            if (peer.containsKey("domainNames")) {
                // Allow/Accept only; names of two or more labels (upstream's validation)
                if (written != Outcome.ALLOW
                        || ((List<?>) peer.get("domainNames")).stream().anyMatch(n -> !((String) n).contains("."))) {
                    return true;
                }
                nonPodPeer = true;
            }
            if (peer.containsKey("networks")) {
                nonPodPeer = true;
                for (Object c : (List<?>) peer.get("networks")) {
                    if (!((String) c).contains("/")) {
                        return true;
                    }
                }
            }
            nonPodPeer |= peer.containsKey("nodes");
        }
        boolean named = ports != null
                && ports.stream()
                        .anyMatch(p -> ((Map<?, ?>) p).containsKey("namedPort")
                                || ((Map<?, ?>) p).containsKey("destinationNamedPort"));
        return named && nonPodPeer;
    }

    /** "Note that host-networked pods are not included in subject selection." */
    private boolean subject(Object subject, Pod pod) {
        Map<?, ?> s = (Map<?, ?>) subject;
        if (s.containsKey("namespaces")) {
            return inNamespaces(s.get("namespaces"), pod);
        }
        Map<?, ?> pods = (Map<?, ?>) s.get("pods");
        return inNamespaces(pods.get("namespaceSelector"), pod)
                && labelsMatch(pods.get("podSelector"), pod.getMetadata().getLabels());
    }

    /** domainNames peers match nothing here: offline, no DNS answer was received. */
    private boolean anyPeer(List<?> peers, Pod remote, String remoteIp) {
        for (Object o : peers) {
            Map<?, ?> peer = (Map<?, ?>) o;
            if (peer.containsKey("namespaces") && remote != null && inNamespaces(peer.get("namespaces"), remote)) {
                return true;
            }
            if (peer.containsKey("pods") && remote != null) {
                Map<?, ?> p = (Map<?, ?>) peer.get("pods");
                if (inNamespaces(p.get("namespaceSelector"), remote)
                        && labelsMatch(
                                p.get("podSelector"), remote.getMetadata().getLabels())) {
                    return true;
                }
            }
            if (peer.containsKey("networks")) {
                for (Object c : (List<?>) peer.get("networks")) {
                    if (inCidr((String) c, remoteIp)) {
                        return true;
                    }
                }
            }
            if (peer.containsKey("nodes")) {
                for (Node n : nodes) {
                    if (labelsMatch(peer.get("nodes"), n.getMetadata().getLabels())) {
                        for (NodeAddress a : n.getStatus().getAddresses()) {
                            if (a.getType().endsWith("IP")
                                    && big(a.getAddress()).equals(big(remoteIp))) {
                                return true;
                            }
                        }
                    }
                }
            }
        }
        return false;
    }

    /** No ports: everything (ICMP too). Otherwise only TCP/UDP/SCTP on a listed port. */
    private static boolean anyPort(List<?> ports, Pod dst, String protocol, int port) {
        if (ports == null) {
            return true;
        }
        for (Object o : ports) {
            Map<?, ?> p = (Map<?, ?>) o;
            if (p.containsKey("portNumber")) {
                Map<?, ?> n = (Map<?, ?>) p.get("portNumber");
                if (protocolOf(n).equals(protocol) && ((Number) n.get("port")).intValue() == port) {
                    return true;
                }
            } else if (p.containsKey("portRange")) {
                if (protocolOf((Map<?, ?>) p.get("portRange")).equals(protocol)
                        && inRange((Map<?, ?>) p.get("portRange"), port)) {
                    return true;
                }
            } else if (p.containsKey("namedPort") || p.containsKey("destinationNamedPort")) {
                String name =
                        (String) (p.containsKey("namedPort") ? p.get("namedPort") : p.get("destinationNamedPort"));
                if (namedPortOf(dst, name, protocol, port)) {
                    return true;
                }
            } else {
                String proto = (String) p.keySet().iterator().next();
                Map<?, ?> dp = (Map<?, ?>) ((Map<?, ?>) p.get(proto)).get("destinationPort");
                if (!proto.toUpperCase().equals(protocol)) {
                    continue;
                }
                if (dp.containsKey("number")
                        ? ((Number) dp.get("number")).intValue() == port
                        : inRange((Map<?, ?>) dp.get("range"), port)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String protocolOf(Map<?, ?> m) {
        return m.get("protocol") == null ? "TCP" : (String) m.get("protocol");
    }

    private static boolean inRange(Map<?, ?> r, int port) {
        return port >= ((Number) r.get("start")).intValue() && port <= ((Number) r.get("end")).intValue();
    }

    /** "NamedPort selects a port on a pod based on name": any container port of that name, its own protocol. */
    private static boolean namedPortOf(Pod dst, String name, String protocol, int port) {
        if (dst == null) {
            return false;
        }
        for (Container c : dst.getSpec().getContainers()) {
            for (ContainerPort cp : list(c.getPorts())) {
                String cproto = cp.getProtocol() == null ? "TCP" : cp.getProtocol();
                if (name.equals(cp.getName()) && cproto.equals(protocol) && cp.getContainerPort() == port) {
                    return true;
                }
            }
        }
        return false;
    }

    private boolean inNamespaces(Object selector, Pod pod) {
        String ns = pod.getMetadata().getNamespace();
        return labelsMatch(selector, nsLabels.getOrDefault(ns, Map.of("kubernetes.io/metadata.name", ns)));
    }

    /** A missing selector (an optional namespaceSelector) selects everything, like an empty one. */
    private static boolean labelsMatch(Object selector, Map<String, String> labels) {
        return selector == null || matches(JSON.convertValue(selector, LabelSelector.class), labels);
    }
}
