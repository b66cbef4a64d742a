// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.flows.Workloads;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Verdict;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Least-privilege NetworkPolicies for one namespace from the allowed flows of its history: one
 * per workload, isolating both directions, selecting the workload by its stable labels, with one
 * rule per peer that lists exactly the ports seen. Peers in the cluster are selected by namespace
 * and stable labels, addresses outside it by a /32 (/128) ipBlock; a port the pod (the
 * destination) names is written by its name. Workloads of the namespace that were seen in no
 * flow get a policy that allows nothing. Pure: the manifests are plain maps, as YAML writes them.
 */
public final class PolicyRecommender {
    public static final String STAGED_ANNOTATION = "kube-verdict.io/staged";

    /** @param policies NetworkPolicy manifests, by name; @param notes what could not be expressed and why */
    public record Recommendation(List<Map<String, Object>> policies, List<String> notes) {}

    private record Workload(String namespace, String name, Map<String, String> labels) {}

    private record Peer(String namespace, Map<String, String> labels, String cidr) implements Comparable<Peer> {
        @Override
        public int compareTo(Peer o) {
            return toString().compareTo(o.toString());
        }
    }

    private record PortRef(String protocol, Object port) implements Comparable<PortRef> {
        @Override
        public int compareTo(PortRef o) {
            int c = protocol.compareTo(o.protocol);
            return c != 0 ? c : String.valueOf(port).compareTo(String.valueOf(o.port));
        }
    }

    /** Per workload and direction: peer -> ports. */
    private static final class Rules {
        final TreeMap<Peer, TreeSet<PortRef>> ingress = new TreeMap<>();
        final TreeMap<Peer, TreeSet<PortRef>> egress = new TreeMap<>();
        long flows;
    }

    private PolicyRecommender() {}

    /**
     * @param podOf the pod of the current state a flow side is (for the ports it names)
     * @param endpoints the current state's endpoints (workloads of the namespace seen in no flow)
     * @param staged whether the manifests carry the staged annotation
     */
    public static Recommendation recommend(
            String namespace,
            List<FlowRecord> flows,
            Function<FlowSide, Optional<PodModel>> podOf,
            List<PodModel> endpoints,
            boolean staged) {
        TreeMap<String, Rules> byWorkload = new TreeMap<>();
        Map<String, Workload> workloads = new TreeMap<>();
        TreeSet<String> notes = new TreeSet<>();
        for (PodModel p : endpoints) {
            if (p.namespace().equals(namespace)) {
                Workload w = new Workload(
                        namespace, Workloads.workloadName(p.name(), p.labels()), Workloads.stableLabels(p.labels()));
                workloads.putIfAbsent(w.name(), w);
                byWorkload.computeIfAbsent(w.name(), n -> new Rules());
            }
        }
        for (FlowRecord f : flows) {
            if (f.getVerdict() != Verdict.VERDICT_ALLOW) {
                continue;
            }
            FlowSide src = f.getSource();
            FlowSide dst = f.getDestination();
            boolean out = src.getNamespace().equals(namespace);
            boolean in = dst.getNamespace().equals(namespace);
            if (!out && !in) {
                continue;
            }
            if (!portsExpressible(f.getProtocol())) {
                notes.add("skipped " + describe(f) + ": NetworkPolicy cannot name protocol " + f.getProtocol()
                        + " (a rule for it would allow every port)");
                continue;
            }
            for (FlowSide peer : List.of(src, dst)) {
                if (!peer.getNamespace().isEmpty()
                        && Workloads.stableLabels(peer.getLabelsMap()).isEmpty()) {
                    notes.add("workload " + side(peer) + " has no stable labels: as a peer it is selected as every "
                            + "pod of its namespace");
                }
            }
            if (out) {
                Workload w = workload(src);
                workloads.putIfAbsent(w.name(), w);
                Rules r = byWorkload.computeIfAbsent(w.name(), n -> new Rules());
                r.flows++;
                r.egress.computeIfAbsent(peer(dst), p -> new TreeSet<>()).add(port(f, podOf.apply(dst)));
            }
            if (in) {
                Workload w = workload(dst);
                workloads.putIfAbsent(w.name(), w);
                Rules r = byWorkload.computeIfAbsent(w.name(), n -> new Rules());
                r.flows++;
                r.ingress.computeIfAbsent(peer(src), p -> new TreeSet<>()).add(port(f, podOf.apply(dst)));
            }
        }
        List<Map<String, Object>> policies = new ArrayList<>();
        byWorkload.forEach((name, rules) -> {
            Workload w = workloads.get(name);
            if (w.labels().isEmpty()) {
                notes.add("no policy for workload " + namespace + "/" + name
                        + ": it has no stable labels to select it by (only its pods' names tell it apart)");
                return;
            }
            policies.add(policy(w, rules, staged));
        });
        return new Recommendation(policies, List.copyOf(notes));
    }

    private static boolean portsExpressible(int protocol) {
        return protocol == Protocol.TCP_VALUE || protocol == Protocol.UDP_VALUE || protocol == Protocol.SCTP_VALUE;
    }

    private static Workload workload(FlowSide s) {
        return new Workload(s.getNamespace(), s.getWorkload(), Workloads.stableLabels(s.getLabelsMap()));
    }

    private static Peer peer(FlowSide s) {
        if (s.getNamespace().isEmpty()) {
            return new Peer("", Map.of(), s.getAddress() + (s.getAddress().indexOf(':') >= 0 ? "/128" : "/32"));
        }
        return new Peer(s.getNamespace(), Workloads.stableLabels(s.getLabelsMap()), "");
    }

    /** The destination port, by the name the destination pod gives it when it names it. */
    private static PortRef port(FlowRecord f, Optional<PodModel> destination) {
        String protocol = Protocol.forNumber(f.getProtocol()).name();
        Object port = destination.stream()
                .flatMap(p -> p.namedPorts().stream())
                .filter(n -> n.port() == f.getPort() && n.protocol().getNumber() == f.getProtocol())
                .map(PodModel.NamedPort::name)
                .sorted()
                .findFirst()
                .<Object>map(n -> n)
                .orElse(f.getPort());
        return new PortRef(protocol, port);
    }

    private static Map<String, Object> policy(Workload w, Rules rules, boolean staged) {
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("name", "recommended-" + w.name());
        meta.put("namespace", w.namespace());
        Map<String, Object> annotations = new LinkedHashMap<>();
        if (staged) {
            annotations.put(STAGED_ANNOTATION, "true");
        }
        annotations.put("kube-verdict.io/recommended-from", rules.flows + " allowed flows");
        meta.put("annotations", annotations);
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("podSelector", Map.of("matchLabels", w.labels()));
        spec.put("policyTypes", List.of("Ingress", "Egress"));
        spec.put("ingress", rules(rules.ingress, w.namespace(), "from"));
        spec.put("egress", rules(rules.egress, w.namespace(), "to"));
        Map<String, Object> policy = new LinkedHashMap<>();
        policy.put("apiVersion", "networking.k8s.io/v1");
        policy.put("kind", "NetworkPolicy");
        policy.put("metadata", meta);
        policy.put("spec", spec);
        return policy;
    }

    private static List<Object> rules(TreeMap<Peer, TreeSet<PortRef>> byPeer, String namespace, String peerField) {
        List<Object> out = new ArrayList<>();
        byPeer.forEach((peer, ports) -> {
            Map<String, Object> rule = new LinkedHashMap<>();
            rule.put(peerField, List.of(peerManifest(peer, namespace)));
            List<Object> portList = new ArrayList<>();
            for (PortRef p : ports) {
                Map<String, Object> port = new LinkedHashMap<>();
                port.put("protocol", p.protocol());
                port.put("port", p.port());
                portList.add(port);
            }
            rule.put("ports", portList);
            out.add(rule);
        });
        return out;
    }

    private static Map<String, Object> peerManifest(Peer p, String namespace) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (!p.cidr().isEmpty()) {
            m.put("ipBlock", Map.of("cidr", p.cidr()));
            return m;
        }
        if (!p.namespace().equals(namespace)) {
            m.put("namespaceSelector", Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", p.namespace())));
        }
        m.put("podSelector", Map.of("matchLabels", p.labels()));
        return m;
    }

    private static String describe(FlowRecord f) {
        return side(f.getSource()) + " -> " + side(f.getDestination()) + " protocol " + f.getProtocol();
    }

    private static String side(FlowSide s) {
        return s.getNamespace().isEmpty() ? s.getAddress() : s.getNamespace() + "/" + s.getWorkload();
    }
}
