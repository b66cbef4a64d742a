// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A deliberately naive NetworkPolicy evaluator written from the API documentation, working on
 * the fabric8 objects directly: no indexes, no IP sets, no compilation. It shares no code with
 * the calculation (not even label-selector matching or address parsing).
 */
class ReferenceEvaluator {
    final Map<String, Map<String, String>> nsLabels = new HashMap<>();
    final List<Pod> pods;
    private final List<NetworkPolicy> policies;

    ReferenceEvaluator(List<Namespace> namespaces, List<Pod> pods, List<NetworkPolicy> policies) {
        for (Namespace n : namespaces) {
            Map<String, String> l = new HashMap<>(
                    n.getMetadata().getLabels() == null
                            ? Map.of()
                            : n.getMetadata().getLabels());
            l.put("kubernetes.io/metadata.name", n.getMetadata().getName());
            nsLabels.put(n.getMetadata().getName(), l);
        }
        this.pods = pods;
        this.policies = policies;
    }

    /** "Pods that are scheduled, have an IP, are not hostNetwork and not terminal (Succeeded, Failed) take part." */
    static boolean isEndpoint(Pod p) {
        String phase = p.getStatus().getPhase();
        return p.getSpec().getNodeName() != null
                && !Boolean.TRUE.equals(p.getSpec().getHostNetwork())
                && !"Succeeded".equals(phase)
                && !"Failed".equals(phase)
                && p.getStatus().getPodIPs() != null
                && !p.getStatus().getPodIPs().isEmpty();
    }

    Pod podWithIp(String ip) {
        for (Pod p : pods) {
            if (isEndpoint(p)) {
                for (PodIP pip : p.getStatus().getPodIPs()) {
                    if (big(pip.getIp()).equals(big(ip))) {
                        return p;
                    }
                }
            }
        }
        return null;
    }

    /**
     * A connection from srcIp to dstIp (either may be a pod's or an outside address). A node
     * opening a connection to one of its own pods (from a node address: a hostNetwork pod's
     * address or a Node's) is never policed: the data plane only judges forwarded traffic and
     * traffic from its pods to the node.
     */
    boolean allowed(String srcIp, String dstIp, String protocol, int port) {
        Pod src = podWithIp(srcIp);
        Pod dst = podWithIp(dstIp);
        if (src != null && src == dst) {
            return true; // loopback: never leaves the pod
        }
        if (src == null
                && dst != null
                && nodeAddresses(dst.getSpec().getNodeName()).contains(big(srcIp))) {
            return true;
        }
        boolean egressOk = src == null || verdict(src, true, dst, dstIp, dst, protocol, port);
        boolean ingressOk = dst == null || verdict(dst, false, src, srcIp, dst, protocol, port);
        return egressOk && ingressOk;
    }

    /** The addresses of a node: its hostNetwork pods' and those {@link #nodeAddress} adds. */
    java.util.Set<BigInteger> nodeAddresses(String node) {
        java.util.Set<BigInteger> out =
                new java.util.HashSet<>(extraNodeAddresses.getOrDefault(node, java.util.Set.of()));
        for (Pod p : pods) {
            if (Boolean.TRUE.equals(p.getSpec().getHostNetwork())
                    && node.equals(p.getSpec().getNodeName())
                    && p.getStatus().getPodIPs() != null) {
                p.getStatus().getPodIPs().forEach(ip -> out.add(big(ip.getIp())));
            }
        }
        return out;
    }

    private final Map<String, java.util.Set<BigInteger>> extraNodeAddresses = new HashMap<>();

    /** Declares an address of a node (a Node object's). */
    void nodeAddress(String node, String ip) {
        extraNodeAddresses.computeIfAbsent(node, n -> new java.util.HashSet<>()).add(big(ip));
    }

    /**
     * One direction at a local endpoint (egress at the source, ingress at the destination):
     * NetworkPolicy only — allowed unless isolated and no rule allows.
     */
    boolean verdict(Pod local, boolean egress, Pod remote, String remoteIp, Pod dst, String protocol, int port) {
        Boolean np = networkPolicies(local, egress, remote, remoteIp, dst, protocol, port);
        return np == null || np;
    }

    /** The NetworkPolicy verdict of one direction, or null when no policy isolates the pod in it. */
    Boolean networkPolicies(
            Pod local, boolean egress, Pod remote, String remoteIp, Pod dst, String protocol, int port) {
        boolean isolated = false;
        boolean allowedByRule = false;
        for (NetworkPolicy np : policies) {
            if (!selects(np, local) || !types(np).contains(egress ? "Egress" : "Ingress")) {
                continue;
            }
            isolated = true;
            if (egress) {
                for (NetworkPolicyEgressRule rule : list(np.getSpec().getEgress())) {
                    if (peersMatch(np, rule.getTo(), remote, remoteIp)
                            && portsMatch(rule.getPorts(), dst, protocol, port)) {
                        allowedByRule = true;
                    }
                }
            } else {
                for (NetworkPolicyIngressRule rule : list(np.getSpec().getIngress())) {
                    if (peersMatch(np, rule.getFrom(), remote, remoteIp)
                            && portsMatch(rule.getPorts(), dst, protocol, port)) {
                        allowedByRule = true;
                    }
                }
            }
        }
        return isolated ? allowedByRule : null;
    }

    /** "If no policyTypes are specified, Ingress is always set and Egress if there are egress rules." */
    static List<String> types(NetworkPolicy np) {
        List<String> t = np.getSpec().getPolicyTypes();
        if (t == null || t.isEmpty()) {
            return list(np.getSpec().getEgress()).isEmpty() ? List.of("Ingress") : List.of("Ingress", "Egress");
        }
        return t;
    }

    boolean selects(NetworkPolicy np, Pod p) {
        return isEndpoint(p)
                && p.getMetadata().getNamespace().equals(np.getMetadata().getNamespace())
                && matches(np.getSpec().getPodSelector(), p.getMetadata().getLabels());
    }

    boolean peersMatch(NetworkPolicy np, List<NetworkPolicyPeer> peers, Pod remote, String remoteIp) {
        if (peers == null || peers.isEmpty()) {
            return true;
        }
        for (NetworkPolicyPeer peer : peers) {
            if (peer.getIpBlock() != null) {
                if (inBlock(peer.getIpBlock(), remoteIp)) {
                    return true;
                }
                continue;
            }
            if (remote == null) {
                continue;
            }
            String ns = remote.getMetadata().getNamespace();
            boolean nsOk = peer.getNamespaceSelector() == null
                    ? ns.equals(np.getMetadata().getNamespace())
                    : matches(
                            peer.getNamespaceSelector(),
                            nsLabels.getOrDefault(ns, Map.of("kubernetes.io/metadata.name", ns)));
            boolean podOk = peer.getPodSelector() == null
                    || matches(peer.getPodSelector(), remote.getMetadata().getLabels());
            if (nsOk && podOk) {
                return true;
            }
        }
        return false;
    }

    static boolean portsMatch(List<NetworkPolicyPort> ports, Pod dst, String protocol, int port) {
        if (ports == null || ports.isEmpty()) {
            return true;
        }
        for (NetworkPolicyPort p : ports) {
            String proto = p.getProtocol() == null ? "TCP" : p.getProtocol();
            if (!proto.equals(protocol)) {
                continue;
            }
            if (p.getPort() == null) {
                return true;
            }
            if (p.getPort().getIntVal() != null) {
                int lo = p.getPort().getIntVal();
                int hi = p.getEndPort() == null ? lo : p.getEndPort();
                if (port >= lo && port <= hi) {
                    return true;
                }
                continue;
            }
            // A named port: the destination pod's container port of that name and protocol.
            if (dst != null) {
                for (Container c : dst.getSpec().getContainers()) {
                    for (ContainerPort cp : list(c.getPorts())) {
                        String cproto = cp.getProtocol() == null ? "TCP" : cp.getProtocol();
                        if (p.getPort().getStrVal().equals(cp.getName())
                                && cproto.equals(protocol)
                                && cp.getContainerPort() == port) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    static boolean matches(LabelSelector s, Map<String, String> labels) {
        Map<String, String> l = labels == null ? Map.of() : labels;
        if (s == null) {
            return true;
        }
        if (s.getMatchLabels() != null) {
            for (Map.Entry<String, String> e : s.getMatchLabels().entrySet()) {
                if (!e.getValue().equals(l.get(e.getKey()))) {
                    return false;
                }
            }
        }
        for (LabelSelectorRequirement req : list(s.getMatchExpressions())) {
            String v = l.get(req.getKey());
            boolean ok = switch (req.getOperator()) {
                case "In" -> v != null && req.getValues().contains(v);
                case "NotIn" -> v == null || !req.getValues().contains(v);
                case "Exists" -> v != null;
                case "DoesNotExist" -> v == null;
                default -> throw new IllegalArgumentException(req.getOperator());
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    static boolean inBlock(IPBlock b, String ip) {
        if (!inCidr(b.getCidr(), ip)) {
            return false;
        }
        for (String e : list(b.getExcept())) {
            if (inCidr(e, ip)) {
                return false;
            }
        }
        return true;
    }

    static boolean inCidr(String cidr, String ip) {
        String[] parts = cidr.split("/");
        boolean v6 = parts[0].contains(":");
        if (v6 != ip.contains(":")) {
            return false;
        }
        int bits = v6 ? 128 : 32;
        int len = Integer.parseInt(parts[1]);
        BigInteger mask = BigInteger.ONE
                .shiftLeft(bits)
                .subtract(BigInteger.ONE)
                .shiftRight(len)
                .not()
                .and(BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE));
        return big(parts[0]).and(mask).equals(big(ip).and(mask));
    }

    static BigInteger big(String ip) {
        try {
            // Only literals are given here, so no name resolution happens.
            return new BigInteger(1, java.net.InetAddress.getByName(ip).getAddress());
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(ip, e);
        }
    }

    static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : l;
    }
}
