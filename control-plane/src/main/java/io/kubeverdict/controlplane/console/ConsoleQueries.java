// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.console;

import io.kubeverdict.controlplane.calc.PodModel;
import io.kubeverdict.controlplane.cli.ExplanationText;
import io.kubeverdict.controlplane.cli.NodeListing;
import io.kubeverdict.controlplane.tools.ConnectivityMatrix;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.GetPolicyRequest;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PolicySource;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The console's answers, each from the inspection service as the viewer (the same calls the CLI
 * makes) and each computed by the CLI's own code: nodes are {@code status}'s ListNodes, pods and
 * the matrix are {@code matrix --control-plane}'s {@link OfflineCluster#fromSnapshots}, a pod is
 * {@code policies}' DescribeEndpoint, a connection is {@code explain}'s Explain and its text.
 */
final class ConsoleQueries {
    /** Pods per page of {@code /api/pods}. */
    static final int MAX_PODS_PAGE = 5000;
    /** Pods in one matrix (rows x columns verdicts): beyond, choose namespaces. */
    static final int MAX_MATRIX_PODS = 400;

    private static final long DEADLINE_SECONDS = 20;

    private final LocalInspection inspection;
    /**
     * The last cluster built, with the snapshot objects it was built from: the in-process channel
     * hands over the published messages themselves, so the same objects mean the same state and
     * the nodes' compiled indexes are reused. Each request still fetches the snapshots as its
     * viewer first, so nobody reads through the cache what they may not read.
     */
    private volatile Built built;

    private record Built(List<NodeSnapshot> snapshots, OfflineCluster cluster) {}

    ConsoleQueries(LocalInspection inspection) {
        this.inspection = inspection;
    }

    private ControlPlaneInspectionBlockingStub stub(Viewer viewer) {
        return inspection.blocking(viewer).withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    String nodes(Viewer viewer) {
        ListNodesResponse all = NodeListing.all(stub(viewer));
        return ConsoleJson.text(all);
    }

    /** A page of the endpoint pods, sorted by namespace/name, with their node and addresses. */
    String pods(Viewer viewer, int offset, int limit) {
        List<PodModel> pods = cluster(viewer).endpointModels();
        int from = Math.min(Math.max(0, offset), pods.size());
        int to = Math.min(pods.size(), from + Math.max(1, Math.min(limit, MAX_PODS_PAGE)));
        List<Map<String, Object>> items = new ArrayList<>();
        for (PodModel p : pods.subList(from, to)) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("namespace", p.namespace());
            item.put("name", p.name());
            item.put("node", p.node());
            item.put("ips", p.ips());
            item.put("labels", p.labels());
            items.add(item);
        }
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("total", pods.size());
        page.put("offset", from);
        page.put("pods", items);
        return ConsoleJson.write(page);
    }

    /** What selects the pod and where it is a peer ({@code policies}), and its node's sync state. */
    String pod(Viewer viewer, String name) {
        ControlPlaneInspectionBlockingStub stub = stub(viewer);
        EndpointDescription d = stub.describeEndpoint(
                DescribeEndpointRequest.newBuilder().setPod(name).build());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("description", ConsoleJson.tree(d));
        NodeStatus node = NodeListing.all(stub).getNodesList().stream()
                .filter(n -> n.getNode().equals(d.getNode()))
                .findFirst()
                .orElse(NodeStatus.newBuilder().setNode(d.getNode()).build());
        out.put("node", ConsoleJson.tree(node));
        return ConsoleJson.write(out);
    }

    /**
     * The explanation of one connection: by addresses (a flow) or by pod names, with {@code
     * explain}'s text of it beside the structure.
     */
    String explain(Viewer viewer, Map<String, String> q) {
        Tuple.Builder t = Tuple.newBuilder()
                .setSrcIp(q.getOrDefault("src", ""))
                .setDstIp(q.getOrDefault("dst", ""))
                .setProtocol(protocol(q.getOrDefault("protocol", "TCP")).getNumber())
                .setDstPort(port(q.getOrDefault("port", "80")));
        ExplainRequest request = ExplainRequest.newBuilder()
                .setTuple(t)
                .setFrom(q.getOrDefault("from", ""))
                .setTo(q.getOrDefault("to", ""))
                .build();
        Explanation e = stub(viewer).explain(request);
        OfflineCluster cluster = cluster(viewer);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("explanation", ConsoleJson.tree(e));
        out.put("text", ExplanationText.render(e, cluster::nodeOf));
        return ConsoleJson.write(out);
    }

    /** One policy object as the control plane last applied it, with its YAML (GetPolicy). */
    String policy(Viewer viewer, String tier, String name) {
        if (tier.isBlank() || name.isBlank()) {
            throw new IllegalArgumentException("a policy is named by tier and name (as explain names it)");
        }
        PolicySource source = stub(viewer)
                .getPolicy(GetPolicyRequest.newBuilder()
                        .setId(PolicyId.newBuilder().setTier(tier).setName(name))
                        .build());
        return ConsoleJson.text(source);
    }

    /** {@code matrix --control-plane -o json} of the pods of these namespaces (none: every pod). */
    String matrix(Viewer viewer, String portText, String protocolText, Set<String> namespaces) {
        int port = port(portText);
        Protocol protocol = protocol(protocolText);
        OfflineCluster cluster = cluster(viewer);
        long chosen = cluster.members().stream()
                .filter(m -> namespaces.isEmpty() || namespaces.contains(m.namespace()))
                .count();
        if (chosen > MAX_MATRIX_PODS) {
            throw new IllegalArgumentException(chosen + " pods are more than " + MAX_MATRIX_PODS
                    + " for one matrix: choose namespaces (or use kube-verdict matrix, which streams)");
        }
        ConnectivityMatrix m;
        synchronized (cluster) { // it compiles node indexes on demand, into a plain map
            m = ConnectivityMatrix.of(
                    cluster, protocol, port, member -> namespaces.isEmpty() || namespaces.contains(member.namespace()));
        }
        return ConsoleJson.write(m.toValue());
    }

    /** The cluster as every node's published snapshot says, like {@code matrix --control-plane}. */
    private OfflineCluster cluster(Viewer viewer) {
        ControlPlaneInspectionBlockingStub stub = stub(viewer);
        List<NodeSnapshot> snapshots = new ArrayList<>();
        for (NodeStatus n : NodeListing.all(stub).getNodesList()) {
            snapshots.add(stub.getSnapshot(
                    GetSnapshotRequest.newBuilder().setNode(n.getNode()).build()));
        }
        Built last = built;
        if (last != null && sameObjects(last.snapshots(), snapshots)) {
            return last.cluster();
        }
        OfflineCluster cluster = OfflineCluster.fromSnapshots(snapshots);
        built = new Built(snapshots, cluster);
        return cluster;
    }

    private static boolean sameObjects(List<NodeSnapshot> a, List<NodeSnapshot> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i) != b.get(i)) {
                return false;
            }
        }
        return true;
    }

    static int port(String text) {
        try {
            int port = Integer.parseInt(text.strip());
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("port must be 1-65535");
    }

    static Protocol protocol(String text) {
        return switch (text.strip().toUpperCase(Locale.ROOT)) {
            case "TCP" -> Protocol.TCP;
            case "UDP" -> Protocol.UDP;
            case "SCTP" -> Protocol.SCTP;
            default -> throw new IllegalArgumentException("protocol must be TCP, UDP or SCTP");
        };
    }
}
