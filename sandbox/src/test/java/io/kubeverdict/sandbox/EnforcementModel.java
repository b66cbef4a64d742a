// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.TierInfo;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * What the pods should see on TCP port {@value #PORT} when each node behaves in its own way:
 * a new connection passes when every node whose forward hook it crosses lets it through (the
 * source's node, and the destination's when that is another node), which is how the testbed
 * routes. With every node {@link NodeBehaviour.Enforcing} the snapshots of one engine state,
 * this is the engine's own matrix ({@link #enforced()}; the fault suite checks they agree).
 */
final class EnforcementModel {
    static final int PORT = 80;

    private final Map<String, PodModel> pods = new TreeMap<>();
    private final Map<String, NodeSnapshot> snapshots;
    private final Map<String, SnapshotIndex> indexes = new LinkedHashMap<>();

    private EnforcementModel(OfflineCluster cluster) {
        cluster.endpoints()
                .forEach(name -> pods.put(name, cluster.endpoint(name).orElseThrow()));
        this.snapshots = Map.copyOf(cluster.snapshots());
        snapshots.forEach((node, snapshot) -> indexes.put(node, SnapshotIndex.compile(snapshot)));
    }

    /** The sandbox's expectation as it stands (the copy last written). */
    static EnforcementModel of(Sandbox sandbox) {
        return new EnforcementModel(sandbox.expectedCluster());
    }

    NodeBehaviour enforcing(String node) {
        SnapshotIndex index = indexes.get(node);
        if (index == null) {
            throw new IllegalArgumentException("no snapshot for node " + node);
        }
        return new NodeBehaviour.Enforcing(index);
    }

    /** node's agent killed in this state: its table holds the local pods this state selects. */
    NodeBehaviour killed(String node, boolean failOpen) {
        return failOpen ? new NodeBehaviour.FailOpenKilled() : new NodeBehaviour.FailClosedKilled(selectedIps(node));
    }

    /** The addresses of node's endpoints that some tier lists a policy for, either direction (docs/design/agent.md: "Selected"). */
    Set<String> selectedIps(String node) {
        Set<String> ips = new HashSet<>();
        for (Endpoint e : snapshots.get(node).getEndpointsList()) {
            for (TierInfo tier : e.getEndpoint().getTiersList()) {
                if (tier.getIngressPoliciesCount() > 0 || tier.getEgressPoliciesCount() > 0) {
                    ips.addAll(e.getEndpoint().getIpsList());
                }
            }
        }
        return ips;
    }

    /** Every agent enforcing this state. */
    Verdicts enforced(String name) {
        return verdicts(name, this::enforcing);
    }

    /** The pods' view when each node behaves as given. */
    static Verdicts verdicts(
            String name,
            List<String> pods,
            Map<String, PodModel> models,
            Function<String, NodeBehaviour> behaviourOfNode) {
        Set<String> allowed = new HashSet<>();
        PacketTuple tuple = new PacketTuple();
        for (String from : pods) {
            for (String to : pods) {
                if (from.equals(to)) {
                    continue;
                }
                PodModel src = models.get(from);
                PodModel dst = models.get(to);
                String srcIp = src.ips().get(0);
                String dstIp = dst.ips().get(0);
                tuple.set(IpAddress.parse(srcIp), IpAddress.parse(dstIp), Protocol.TCP_VALUE, PORT);
                boolean passes = behaviourOfNode.apply(src.node()).passes(srcIp, dstIp, tuple);
                if (passes && !dst.node().equals(src.node())) {
                    passes = behaviourOfNode.apply(dst.node()).passes(srcIp, dstIp, tuple);
                }
                if (passes) {
                    allowed.add(Verdicts.pair(from, to));
                }
            }
        }
        return new Verdicts(name, pods, allowed);
    }

    Verdicts verdicts(String name, Function<String, NodeBehaviour> behaviourOfNode) {
        return verdicts(name, List.copyOf(pods.keySet()), pods, behaviourOfNode);
    }

    /** The pods, "namespace/name", and where they run. */
    Map<String, PodModel> pods() {
        return pods;
    }

    String nodeOf(String pod) {
        return pods.get(pod).node();
    }
}
