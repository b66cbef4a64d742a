package io.kubeverdict.controlplane.tools;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.calc.PolicyCalculator;
import io.kubeverdict.policy.Decision;
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

/**
 * A whole cluster evaluated the way enforcement does it: the calculator's per-node snapshots,
 * each compiled into a {@link SnapshotIndex}; egress is decided on the source pod's node, ingress
 * on the destination pod's node. Addresses that belong to no endpoint are outside the cluster:
 * only the other side's node decides.
 */
public final class OfflineCluster {
    private final TreeMap<String, PodModel> endpoints = new TreeMap<>();
    private final Map<String, PodModel> byIp = new HashMap<>();
    private final Map<String, SnapshotIndex> indexes = new TreeMap<>();
    private final Map<String, NodeSnapshot> snapshots = new TreeMap<>();
    private final Map<String, WorkloadEndpoint> workloads = new HashMap<>();
    private final PacketTuple tuple = new PacketTuple();

    public OfflineCluster(Collection<Namespace> namespaces, Collection<Pod> pods,
                          Collection<NetworkPolicy> policies) {
        this(calculate(namespaces, pods, policies), pods);
    }

    /** Evaluates a calculator's current snapshots; {@code pods} are the pods it was given. */
    public OfflineCluster(PolicyCalculator calc, Collection<Pod> pods) {
        this(calc.nodes().stream().map(calc::snapshot).toList(), pods.stream().map(PodModel::of).toList());
    }

    private OfflineCluster(Collection<NodeSnapshot> nodeSnapshots, Collection<PodModel> pods) {
        for (PodModel m : pods) {
            if (m.endpoint()) {
                endpoints.put(m.key(), m);
                for (String ip : m.ips()) {
                    byIp.putIfAbsent(ip, m);
                }
            }
        }
        for (NodeSnapshot s : nodeSnapshots) {
            snapshots.put(s.getNode(), s);
            indexes.put(s.getNode(), SnapshotIndex.compile(s));
            for (Endpoint e : s.getEndpointsList()) {
                workloads.put(e.getId().getNamespace() + "/" + e.getId().getPod(), e.getEndpoint());
            }
        }
    }

    /**
     * A cluster as published snapshots say it is (a running control plane's): its endpoints are
     * the snapshots' endpoints, each on the node whose snapshot holds it.
     */
    public static OfflineCluster fromSnapshots(Collection<NodeSnapshot> nodeSnapshots) {
        List<PodModel> pods = new java.util.ArrayList<>();
        for (NodeSnapshot s : nodeSnapshots) {
            for (Endpoint e : s.getEndpointsList()) {
                pods.add(new PodModel(e.getId().getNamespace(), e.getId().getPod(), e.getEndpoint().getLabelsMap(),
                        s.getNode(), e.getEndpoint().getIpsList(), true, List.of()));
            }
        }
        return new OfflineCluster(nodeSnapshots, pods);
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

    public Optional<PodModel> endpoint(String namespaceName) {
        return Optional.ofNullable(endpoints.get(namespaceName));
    }

    public Optional<PodModel> endpointByIp(String ip) {
        return Optional.ofNullable(byIp.get(ip));
    }

    public Map<String, NodeSnapshot> snapshots() {
        return snapshots;
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
                if (Addresses.isV6(s) == Addresses.isV6(d)) {
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

    /** Whether a new connection between two addresses is allowed. */
    public boolean allowed(String srcIp, String dstIp, int protocol, int port) {
        Addresses.fill(tuple, srcIp, dstIp, protocol, port);
        PodModel src = byIp.get(srcIp);
        PodModel dst = byIp.get(dstIp);
        if (src != null && !Decision.allowed(indexes.get(src.node()).decide(tuple))) {
            return false;
        }
        if (dst != null && (src == null || !dst.node().equals(src.node()))) {
            return Decision.allowed(indexes.get(dst.node()).decide(tuple));
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
            egress = TierVisits.annotate(indexes.get(src.node()).explain(t).getEgress(), workloads.get(src.key()),
                    Decision.EGRESS);
            out.setSource(id(src));
        }
        if (dst != null) {
            ingress = TierVisits.annotate(indexes.get(dst.node()).explain(t).getIngress(), workloads.get(dst.key()),
                    Decision.INGRESS);
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
