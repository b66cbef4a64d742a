// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.NodeModel;
import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.TierVisits;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A whole cluster evaluated the way enforcement does it: the calculator's per-node snapshots,
 * each compiled into a {@link SnapshotIndex}; egress is decided on the source pod's node, ingress
 * on the destination pod's node. Addresses that belong to no endpoint are outside the cluster:
 * only the other side's node decides — except that a connection a node opens to its own pods is
 * never policed (the data plane has no output hook), which is how hostNetwork pods reach the pods
 * of their node.
 *
 * <p>Besides endpoints, the {@link #members()} (what the matrix lists) include hostNetwork pods
 * that have a node, addressed by their status.podIPs (a real cluster reports the node's address
 * there) or else by their Node's addresses: they are never subjects or pod peers, but traffic to
 * them is traffic to their node's address, which {@code nodes} and {@code networks} peers see.
 */
public final class OfflineCluster {
    /** A row/column of the matrix: an endpoint pod, or a hostNetwork pod addressed by its node. */
    public record Member(String key, String node, List<String> ips, boolean hostNetwork) {
        /** The namespace of the key "namespace/name" ("" for a key without one). */
        public String namespace() {
            int slash = key.indexOf('/');
            return slash < 0 ? "" : key.substring(0, slash);
        }
    }

    private final TreeMap<String, PodModel> endpoints = new TreeMap<>();
    private final TreeMap<String, Member> members = new TreeMap<>();
    private List<PodModel> endpointList = List.of();
    private final Map<String, PodModel> byIp = new HashMap<>();
    /** Node addresses (Node objects, hostNetwork pods' addresses) -> node name. */
    private final Map<String, String> nodeOfAddress = new HashMap<>();
    /** The node names, sorted, and each node's snapshot (the calculator's, or published ones). */
    private final Supplier<Collection<String>> nodes;

    private final Function<String, NodeSnapshot> snapshotOf;
    /** Compiled on first use: `explain` needs two nodes, not all of them. */
    private final Map<String, Compiled> compiled = new HashMap<>();

    private final PacketTuple tuple = new PacketTuple();

    public OfflineCluster(Collection<Namespace> namespaces, Collection<Pod> pods, Collection<NetworkPolicy> policies) {
        this(ClusterObjects.of(namespaces, pods, policies));
    }

    public OfflineCluster(ClusterObjects objects) {
        this(objects.feed(new IncrementalPolicyCalculator()), objects.pods(), objects.nodes());
    }

    /** Evaluates a calculator's current snapshots; {@code pods} are the pods it was given. */
    public OfflineCluster(PolicyCalculator calc, Collection<Pod> pods) {
        this(calc, pods, List.of());
    }

    /** As above, with the Node objects it was given (addresses of hostNetwork pods). */
    public OfflineCluster(PolicyCalculator calc, Collection<Pod> pods, Collection<Node> nodes) {
        this(calc::nodes, calc::snapshot);
        Map<String, List<String>> nodeAddresses = new HashMap<>();
        for (Node n : nodes) {
            NodeModel m = NodeModel.of(n);
            nodeAddresses.put(m.name(), m.addresses());
            m.addresses().forEach(ip -> nodeOfAddress.putIfAbsent(ip, m.name()));
        }
        for (Pod p : pods) {
            PodModel m = PodModel.of(p);
            if (m.endpoint()) {
                addEndpoint(m);
            } else if (isHostNetwork(p) && m.node() != null) {
                List<String> ips = m.ips().isEmpty() ? nodeAddresses.getOrDefault(m.node(), List.of()) : m.ips();
                if (!ips.isEmpty()) {
                    members.put(m.key(), new Member(m.key(), m.node(), ips, true));
                    ips.forEach(ip -> nodeOfAddress.putIfAbsent(ip, m.node()));
                }
            }
        }
        this.endpointList = List.copyOf(endpoints.values());
    }

    private OfflineCluster(Supplier<Collection<String>> nodes, Function<String, NodeSnapshot> snapshotOf) {
        this.nodes = nodes;
        this.snapshotOf = snapshotOf;
    }

    /**
     * A cluster as published snapshots say it is (a running control plane's): its endpoints are
     * the snapshots' endpoints, each on the node whose snapshot holds it.
     */
    public static OfflineCluster fromSnapshots(Collection<NodeSnapshot> nodeSnapshots) {
        Map<String, NodeSnapshot> byNode = new TreeMap<>();
        List<PodModel> pods = new ArrayList<>();
        for (NodeSnapshot s : nodeSnapshots) {
            byNode.put(s.getNode(), s);
            for (Endpoint e : s.getEndpointsList()) {
                String ns = e.getId().getNamespace();
                String pod = e.getId().getPod();
                pods.add(new PodModel(
                        ns,
                        pod,
                        e.getEndpoint().getLabelsMap(),
                        s.getNode(),
                        e.getEndpoint().getIpsList(),
                        true,
                        List.of(),
                        ns + "/" + pod));
            }
        }
        OfflineCluster cluster = new OfflineCluster(
                byNode::keySet,
                n -> byNode.getOrDefault(n, NodeSnapshot.newBuilder().setNode(n).build()));
        pods.forEach(cluster::addEndpoint);
        cluster.endpointList = List.copyOf(cluster.endpoints.values());
        return cluster;
    }

    private void addEndpoint(PodModel m) {
        endpoints.put(m.key(), m);
        members.put(m.key(), new Member(m.key(), m.node(), m.ips(), false));
        for (String ip : m.ips()) {
            byIp.putIfAbsent(ip, m);
        }
    }

    /** A node's snapshot compiled, and its endpoints' workloads (for the tier visits of explanations). */
    private record Compiled(SnapshotIndex index, Map<String, WorkloadEndpoint> workloads) {}

    private Compiled compiled(String node) {
        return compiled.computeIfAbsent(node, n -> {
            NodeSnapshot s = snapshotOf.apply(n);
            Map<String, WorkloadEndpoint> workloads = new HashMap<>();
            for (Endpoint e : s.getEndpointsList()) {
                workloads.put(e.getId().getNamespace() + "/" + e.getId().getPod(), e.getEndpoint());
            }
            return new Compiled(SnapshotIndex.compile(s), workloads);
        });
    }

    private SnapshotIndex index(String node) {
        return compiled(node).index();
    }

    private WorkloadEndpoint workload(PodModel pod) {
        return compiled(pod.node()).workloads().get(pod.key());
    }

    private static boolean isHostNetwork(Pod p) {
        return p.getSpec() != null && Boolean.TRUE.equals(p.getSpec().getHostNetwork());
    }

    /** Endpoint pods, "namespace/name", sorted. */
    public List<String> endpoints() {
        return List.copyOf(endpoints.keySet());
    }

    /** Endpoint pods, sorted like {@link #endpoints()}. */
    public List<PodModel> endpointModels() {
        return endpointList;
    }

    public Optional<PodModel> endpoint(String namespaceName) {
        return Optional.ofNullable(endpoints.get(namespaceName));
    }

    public Optional<PodModel> endpointByIp(String ip) {
        return Optional.ofNullable(byIp.get(ip));
    }

    /** Endpoints and addressable hostNetwork pods, by "namespace/name". */
    public List<Member> members() {
        return List.copyOf(members.values());
    }

    public Optional<Member> member(String namespaceName) {
        return Optional.ofNullable(members.get(namespaceName));
    }

    /**
     * Endpoints whose egress rules name domains ("namespace/name" -> patterns, sorted): what such a
     * rule allows depends on the DNS answers the pod receives at run time, and offline nothing is
     * learned, so here those rules match nothing.
     */
    public Map<String, List<String>> domainNameRules() {
        Map<String, List<String>> out = new TreeMap<>();
        for (NodeSnapshot s : snapshots().values()) {
            for (var e : s.getEndpointsList()) {
                java.util.TreeSet<String> patterns = new java.util.TreeSet<>();
                e.getEndpoint().getDomainWatchesList().forEach(d -> patterns.addAll(d.getPatternsList()));
                if (!patterns.isEmpty()) {
                    out.put(e.getId().getNamespace() + "/" + e.getId().getPod(), List.copyOf(patterns));
                }
            }
        }
        return out;
    }

    /** Every node's snapshot, by node name (sorted). */
    public Map<String, NodeSnapshot> snapshots() {
        Map<String, NodeSnapshot> out = new TreeMap<>();
        nodes.get().forEach(n -> out.put(n, snapshotOf.apply(n)));
        return out;
    }

    /**
     * The addresses a connection between two endpoints uses: the first source address whose
     * family the destination also has. Empty when they share no family.
     */
    public Optional<String[]> addressPair(PodModel src, PodModel dst) {
        return addressPair(src.ips(), dst.ips());
    }

    /** As {@link #addressPair(PodModel, PodModel)}, for address lists (a pod's, or one given address). */
    public static Optional<String[]> addressPair(List<String> src, List<String> dst) {
        for (String s : src) {
            for (String d : dst) {
                if (isV6(s) == isV6(d)) {
                    return Optional.of(new String[] {s, d});
                }
            }
        }
        return Optional.empty();
    }

    /** Whether a new connection between two endpoints is allowed (hot-path decide on both nodes). */
    public boolean allowed(PodModel src, PodModel dst, int protocol, int port) {
        return allowed(members.get(src.key()), members.get(dst.key()), protocol, port);
    }

    /** Whether a new connection between two members (endpoints or hostNetwork pods) is allowed. */
    public boolean allowed(Member src, Member dst, int protocol, int port) {
        if (src.key().equals(dst.key())) {
            // A pod's connection to itself stays on its loopback: it never reaches the node and
            // no policy applies (the upstream suite's AllowLoopback).
            return true;
        }
        Optional<String[]> pair = addressPair(src.ips(), dst.ips());
        if (pair.isEmpty()) {
            return false;
        }
        return allowed(pair.get()[0], pair.get()[1], protocol, port);
    }

    /** A canonical address literal (as endpoints carry them) has a colon iff it is IPv6. */
    private static boolean isV6(String canonicalIp) {
        return canonicalIp.indexOf(':') >= 0;
    }

    /** Whether a new connection between two addresses (of one family) is allowed. */
    public boolean allowed(String srcIp, String dstIp, int protocol, int port) {
        PodModel src = byIp.get(srcIp);
        PodModel dst = byIp.get(dstIp);
        if (nodeLocal(src, srcIp, dst)) {
            return true;
        }
        tuple.set(IpAddress.parse(srcIp), IpAddress.parse(dstIp), protocol, port);
        if (src != null && !Decision.allowed(index(src.node()).decide(tuple))) {
            return false;
        }
        if (dst != null && (src == null || !dst.node().equals(src.node()))) {
            return Decision.allowed(index(dst.node()).decide(tuple));
        }
        return true;
    }

    /** A node's own address to one of its pods: opened by the node, never queued, never policed. */
    private boolean nodeLocal(PodModel src, String srcIp, PodModel dst) {
        return src == null && dst != null && dst.node().equals(nodeOfAddress.get(srcIp));
    }

    /** The verdict with both directions explained, each by the node that enforces it. */
    public Explanation explain(String srcIp, String dstIp, int protocol, int port) {
        Tuple t = Tuple.newBuilder()
                .setSrcIp(srcIp)
                .setDstIp(dstIp)
                .setProtocol(protocol)
                .setDstPort(port)
                .build();
        PodModel src = byIp.get(srcIp);
        PodModel dst = byIp.get(dstIp);
        Explanation.Builder out = Explanation.newBuilder().setTuple(t);
        DirectionExplanation egress = DirectionExplanation.newBuilder()
                .setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setReason(
                        nodeOfAddress.containsKey(srcIp)
                                ? "source is node " + nodeOfAddress.get(srcIp) + ", not a cluster endpoint"
                                : "source is not a cluster endpoint")
                .build();
        DirectionExplanation ingress = DirectionExplanation.newBuilder()
                .setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setReason(
                        nodeOfAddress.containsKey(dstIp)
                                ? "destination is node " + nodeOfAddress.get(dstIp) + ", not a cluster endpoint"
                                : "destination is not a cluster endpoint")
                .build();
        if (src != null) {
            egress = TierVisits.annotate(
                    new Explainer(index(src.node())).explain(t).getEgress(), workload(src), Decision.EGRESS);
            out.setSource(id(src));
        }
        if (dst != null) {
            ingress = nodeLocal(src, srcIp, dst)
                    ? DirectionExplanation.newBuilder()
                            .setEvaluated(false)
                            .setVerdict(Verdict.VERDICT_ALLOW)
                            .setReason("node-local: node " + dst.node() + " opens the connection to its own pod,"
                                    + " which is never policed")
                            .build()
                    : TierVisits.annotate(
                            new Explainer(index(dst.node())).explain(t).getIngress(), workload(dst), Decision.INGRESS);
            out.setDestination(id(dst));
        }
        if (src != null && src == dst) {
            // Same rule as the matrix: a pod's traffic to itself stays on its loopback.
            return loopback(t, id(src));
        }
        boolean denied = (egress.getEvaluated() && egress.getVerdict() != Verdict.VERDICT_ALLOW)
                || (ingress.getEvaluated() && ingress.getVerdict() != Verdict.VERDICT_ALLOW);
        return out.setEgress(egress)
                .setIngress(ingress)
                .setVerdict(denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW)
                .build();
    }

    /** A pod's connection to itself: it stays on the pod's loopback, no node sees it, allowed. */
    public static Explanation loopback(Tuple t, EndpointId pod) {
        DirectionExplanation loopback = DirectionExplanation.newBuilder()
                .setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setReason("loopback: a pod's connection to itself never leaves the pod")
                .build();
        return Explanation.newBuilder()
                .setTuple(t)
                .setSource(pod)
                .setDestination(pod)
                .setEgress(loopback)
                .setIngress(loopback)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .build();
    }

    /** The node of an endpoint address, or of a node address. */
    public Optional<String> nodeOf(String ip) {
        return Optional.ofNullable(byIp.get(ip))
                .map(PodModel::node)
                .or(() -> Optional.ofNullable(nodeOfAddress.get(ip)));
    }

    private static EndpointId id(PodModel p) {
        return EndpointId.newBuilder()
                .setNamespace(p.namespace())
                .setPod(p.name())
                .build();
    }
}
