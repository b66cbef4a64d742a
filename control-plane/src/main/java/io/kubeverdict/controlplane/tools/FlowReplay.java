// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.flows.DecidingRule;
import io.kubeverdict.controlplane.flows.Workloads;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.Verdict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Recorded flows decided again in another state of the cluster (a proposed change), with the
 * verdict function enforcement uses ({@link OfflineCluster#explain}): a flow flips when its
 * verdict there differs from the recorded one. Each in-cluster side is replayed as a pod of its
 * workload in that state: the pod last seen if it is still there, else the first pod (by name)
 * of the same namespace, workload and stable labels. A side whose workload is not there cannot
 * be replayed and is reported, never guessed.
 */
public final class FlowReplay {
    /** A flow whose verdict would change: what decided it before (recorded) and after. */
    public record Flip(FlowRecord flow, Explanation after, String sourcePod, String destinationPod) {
        public Verdict before() {
            return flow.getVerdict();
        }

        public String afterDecidedBy() {
            return DecidingRule.text(after);
        }
    }

    /** @param unresolved flows with a side whose workload has no pod in the replayed state */
    public record Result(int replayed, List<Flip> flips, List<FlowRecord> unresolved) {
        /** Recorded verdicts (counts) that would flip. */
        public long flippedCount() {
            return flips.stream().mapToLong(f -> f.flow().getCount()).sum();
        }
    }

    private record WorkloadKey(String namespace, String workload, Map<String, String> labels) {}

    private final OfflineCluster cluster;
    private final Map<WorkloadKey, PodModel> byWorkload = new HashMap<>();

    public FlowReplay(OfflineCluster cluster) {
        this.cluster = cluster;
        for (PodModel p : cluster.endpointModels()) { // sorted by name: the first pod of a workload wins
            byWorkload.putIfAbsent(
                    new WorkloadKey(
                            p.namespace(),
                            Workloads.workloadName(p.name(), p.labels()),
                            Workloads.stableLabels(p.labels())),
                    p);
        }
    }

    /**
     * Each connection (sides, protocol, port) once, as last recorded: records of the same
     * connection under earlier states (another verdict or rule) are what it was, not what it is.
     */
    public Result replay(List<FlowRecord> flows) {
        List<Flip> flips = new ArrayList<>();
        List<FlowRecord> unresolved = new ArrayList<>();
        int replayed = 0;
        for (FlowRecord f : latestPerConnection(flows)) {
            Optional<Replayed> r = decide(f);
            if (r.isEmpty()) {
                unresolved.add(f);
                continue;
            }
            replayed++;
            if (r.get().after().getVerdict() != f.getVerdict()) {
                flips.add(new Flip(
                        f, r.get().after(), r.get().sourcePod(), r.get().destinationPod()));
            }
        }
        return new Result(replayed, flips, unresolved);
    }

    private record Connection(FlowSide source, FlowSide destination, int protocol, int port) {}

    static List<FlowRecord> latestPerConnection(List<FlowRecord> flows) {
        Map<Connection, FlowRecord> latest = new LinkedHashMap<>();
        for (FlowRecord f : flows) {
            Connection c =
                    new Connection(identity(f.getSource()), identity(f.getDestination()), f.getProtocol(), f.getPort());
            latest.merge(
                    c,
                    f,
                    (a, b) ->
                            com.google.protobuf.util.Timestamps.compare(b.getLastSeen(), a.getLastSeen()) > 0 ? b : a);
        }
        return List.copyOf(latest.values());
    }

    /** A side without what changes between records (its last pod and address). */
    private static FlowSide identity(FlowSide s) {
        return s.toBuilder().clearLastPod().clearLastIp().build();
    }

    /** A flow decided in this state, with the pods it was replayed as ("" for an address outside). */
    public record Replayed(Explanation after, String sourcePod, String destinationPod) {}

    /** The flow decided in this state; empty when a side's workload has no pod here. */
    public Optional<Replayed> decide(FlowRecord f) {
        Optional<Side> src = side(f.getSource());
        Optional<Side> dst = side(f.getDestination());
        if (src.isEmpty() || dst.isEmpty()) {
            return Optional.empty();
        }
        Optional<String[]> pair =
                OfflineCluster.addressPair(src.get().ips(), dst.get().ips());
        if (pair.isEmpty()) {
            return Optional.empty();
        }
        Explanation x = cluster.explain(pair.get()[0], pair.get()[1], f.getProtocol(), f.getPort());
        return Optional.of(new Replayed(x, src.get().pod(), dst.get().pod()));
    }

    private record Side(String pod, List<String> ips) {}

    private Optional<Side> side(FlowSide s) {
        if (s.getNamespace().isEmpty()) {
            return s.getAddress().isEmpty() ? Optional.empty() : Optional.of(new Side("", List.of(s.getAddress())));
        }
        return pod(s).map(p -> new Side(p.key(), p.ips()));
    }

    /** The pod an in-cluster side is replayed as: its last pod if still there, else its workload's first. */
    public Optional<PodModel> pod(FlowSide s) {
        Optional<PodModel> last = s.getLastPod().isEmpty()
                ? Optional.empty()
                : cluster.endpoint(s.getLastPod()).filter(p -> p.namespace().equals(s.getNamespace()));
        return last.or(() -> Optional.ofNullable(
                byWorkload.get(new WorkloadKey(s.getNamespace(), s.getWorkload(), Map.copyOf(s.getLabelsMap())))));
    }
}
