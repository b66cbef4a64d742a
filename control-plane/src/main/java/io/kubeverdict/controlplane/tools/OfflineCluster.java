package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
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
 * only the other side's node decides.
 */
public final class OfflineCluster {
    private final TreeMap<String, PodModel> endpoints = new TreeMap<>();
    private final List<PodModel> endpointList;
    private final Map<String, PodModel> byIp = new HashMap<>();
    /** The node names, sorted, and each node's snapshot (the calculator's, or published ones). */
    private final Supplier<Collection<String>> nodes;
    private final Function<String, NodeSnapshot> snapshotOf;
    /** Compiled on first use: `explain` needs two nodes, not all of them. */
    private final Map<String, Compiled> compiled = new HashMap<>();
    private final PacketTuple tuple = new PacketTuple();

    public OfflineCluster(Collection<Namespace> namespaces, Collection<Pod> pods,
                          Collection<NetworkPolicy> policies) {
        this(calculate(namespaces, pods, policies), pods);
    }

    /** Evaluates a calculator's current snapshots; {@code pods} are the pods it was given. */
    public OfflineCluster(PolicyCalculator calc, Collection<Pod> pods) {
        this(calc::nodes, calc::snapshot, pods.stream().map(PodModel::of).toList());
    }

    private OfflineCluster(Supplier<Collection<String>> nodes, Function<String, NodeSnapshot> snapshotOf,
                           Collection<PodModel> pods) {
        for (PodModel m : pods) {
            if (m.endpoint()) {
                endpoints.put(m.key(), m);
                for (String ip : m.ips()) {
                    byIp.putIfAbsent(ip, m);
                }
            }
        }
        this.endpointList = List.copyOf(endpoints.values());
        this.nodes = nodes;
        this.snapshotOf = snapshotOf;
    }

    /**
     * A cluster as published snapshots say it is (a running control plane's): its endpoints are
     * the snapshots' endpoints, each on the node whose snapshot holds it.
     */
    public static OfflineCluster fromSnapshots(Collection<NodeSnapshot> nodeSnapshots) {
        Map<String, NodeSnapshot> byNode = new TreeMap<>();
        List<PodModel> pods = new java.util.ArrayList<>();
        for (NodeSnapshot s : nodeSnapshots) {
            byNode.put(s.getNode(), s);
            for (Endpoint e : s.getEndpointsList()) {
                pods.add(new PodModel(e.getId().getNamespace(), e.getId().getPod(), e.getEndpoint().getLabelsMap(),
                        s.getNode(), e.getEndpoint().getIpsList(), true, List.of()));
            }
        }
        return new OfflineCluster(byNode::keySet,
                n -> byNode.getOrDefault(n, NodeSnapshot.newBuilder().setNode(n).build()), pods);
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

    private static PolicyCalculator calculate(Collection<Namespace> namespaces, Collection<Pod> pods,
                                              Collection<NetworkPolicy> policies) {
        PolicyCalculator calc = new IncrementalPolicyCalculator();
        namespaces.forEach(calc::upsertNamespace);
        pods.forEach(calc::upsertPod);
        policies.forEach(calc::upsertPolicy);
        return calc;
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
    public static Optional<String[]> addressPair(List<String> srcIps, List<String> dstIps) {
        for (String s : srcIps) {
            for (String d : dstIps) {
                if (isV6(s) == isV6(d)) {
                    return Optional.of(new String[] {s, d});
                }
            }
        }
        return Optional.empty();
    }

    /** Whether a new connection between two endpoints is allowed (hot-path decide on both nodes). */
    public boolean allowed(PodModel src, PodModel dst, int protocol, int port) {
        if (src.key().equals(dst.key())) {
            // A pod's connection to itself stays on its loopback: it never reaches the node and
            // no policy applies (the upstream suite's AllowLoopback).
            return true;
        }
        Optional<String[]> pair = addressPair(src, dst);
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
        tuple.set(IpAddress.parse(srcIp), IpAddress.parse(dstIp), protocol, port);
        PodModel src = byIp.get(srcIp);
        PodModel dst = byIp.get(dstIp);
        if (src != null && !Decision.allowed(index(src.node()).decide(tuple))) {
            return false;
        }
        if (dst != null && (src == null || !dst.node().equals(src.node()))) {
            return Decision.allowed(index(dst.node()).decide(tuple));
        }
        return true;
    }

    /** The verdict with both directions explained, each by the node that enforces it. */
    public Explanation explain(String srcIp, String dstIp, int protocol, int port) {
        Tuple t = Tuple.newBuilder().setSrcIp(srcIp).setDstIp(dstIp).setProtocol(protocol).setDstPort(port).build();
        PodModel src = byIp.get(srcIp);
        PodModel dst = byIp.get(dstIp);
        Explanation.Builder out = Explanation.newBuilder().setTuple(t);
        DirectionExplanation egress = DirectionExplanation.newBuilder().setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW).setReason("source is not a cluster endpoint").build();
        DirectionExplanation ingress = DirectionExplanation.newBuilder().setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW).setReason("destination is not a cluster endpoint").build();
        if (src != null) {
            egress = TierVisits.annotate(new Explainer(index(src.node())).explain(t).getEgress(),
                    workload(src), Decision.EGRESS);
            out.setSource(id(src));
        }
        if (dst != null) {
            ingress = TierVisits.annotate(new Explainer(index(dst.node())).explain(t).getIngress(),
                    workload(dst), Decision.INGRESS);
            out.setDestination(id(dst));
        }
        if (src != null && src == dst) {
            // Same rule as the matrix: a pod's traffic to itself stays on its loopback.
            return loopback(t, id(src));
        }
        boolean denied = (egress.getEvaluated() && egress.getVerdict() != Verdict.VERDICT_ALLOW)
                || (ingress.getEvaluated() && ingress.getVerdict() != Verdict.VERDICT_ALLOW);
        return out.setEgress(egress).setIngress(ingress)
                .setVerdict(denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW).build();
    }

    /** A pod's connection to itself: it stays on the pod's loopback, no node sees it, allowed. */
    public static Explanation loopback(Tuple t, EndpointId pod) {
        DirectionExplanation loopback = DirectionExplanation.newBuilder().setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setReason("loopback: a pod's connection to itself never leaves the pod").build();
        return Explanation.newBuilder().setTuple(t).setSource(pod).setDestination(pod)
                .setEgress(loopback).setIngress(loopback).setVerdict(Verdict.VERDICT_ALLOW).build();
    }

    public Optional<String> nodeOf(String ip) {
        return Optional.ofNullable(byIp.get(ip)).map(PodModel::node);
    }

    private static EndpointId id(PodModel p) {
        return EndpointId.newBuilder().setNamespace(p.namespace()).setPod(p.name()).build();
    }
}
