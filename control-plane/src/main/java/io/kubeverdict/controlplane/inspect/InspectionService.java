// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.InspectionScope;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.calc.PolicySources;
import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.flows.FlowQueries;
import io.kubeverdict.controlplane.inspect.EndpointDirectory.Located;
import io.kubeverdict.controlplane.receipts.ReplicatedReceipts;
import io.kubeverdict.controlplane.sync.IndexedSnapshot;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.policy.Decision;
import io.kubeverdict.policy.Explainer;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.TierVisits;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.GetPolicyRequest;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListFlowsRequest;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.ListLocalReceiptsRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.ListPolicyReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.LocalReceipts;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.PolicySource;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * ControlPlaneInspection over live state: the published snapshots and the connected agents.
 * Explain evaluates egress with the source's node snapshot and ingress with the destination's,
 * with the same verdict function ({@link SnapshotIndex}) the agents use. Each call sees only the
 * nodes of its caller's {@link InspectionScope}: under mTLS a node's certificate reads its own node.
 * Every call asks who the caller is before it looks at any state, and a caller who may read
 * nothing gets the same refusal whatever it names.
 * ListNodes pages by node name.
 */
public final class InspectionService extends ControlPlaneInspectionGrpc.ControlPlaneInspectionImplBase {
    static final int DEFAULT_PAGE_SIZE = 500;
    static final int MAX_PAGE_SIZE = 1000;

    private final SnapshotHub hub;
    private final PolicySyncService sync;
    private final NodeAuthorizer authorizer;
    /** Explainers of compiled indexes by node, recompiled when the node's snapshot version moves on. */
    private final Map<String, Compiled> indexes = new ConcurrentHashMap<>();

    private record Compiled(long version, Explainer explainer) {}

    private final EndpointDescriber describer;
    private volatile BiConsumer<ObserveVerdictsRequest, ServerCallStreamObserver<ObservedVerdict>> verdicts;
    private volatile ReceiptCalls receipts;
    private volatile Supplier<String> sourceProblem = () -> "";
    private volatile FlowHistory flows;
    private volatile PolicyObjects policies = new PolicyObjects(new PolicySources());

    public InspectionService(SnapshotHub hub, PolicySyncService sync, NodeAuthorizer authorizer) {
        this(hub, sync, authorizer, ids -> Map.of());
    }

    /** @param setDescriptions what IP sets mean in words, by id (the calculation's definitions) */
    public InspectionService(
            SnapshotHub hub,
            PolicySyncService sync,
            NodeAuthorizer authorizer,
            Function<Collection<String>, Map<String, String>> setDescriptions) {
        this.hub = hub;
        this.sync = sync;
        this.authorizer = authorizer;
        this.describer = new EndpointDescriber(hub, setDescriptions);
    }

    @Override
    public void listNodes(ListNodesRequest request, StreamObserver<ListNodesResponse> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (scope.refusal() != null) {
            // An empty list would read as "no nodes" (kube-verdict status: all in sync).
            out.onError(scope.refusal().asRuntimeException());
            return;
        }
        String after;
        try {
            after = PageTokens.decode(request.getPageToken());
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        int pageSize = request.getPageSize() <= 0 ? DEFAULT_PAGE_SIZE : Math.min(request.getPageSize(), MAX_PAGE_SIZE);
        String revision = hub.sourceRevision();
        TreeMap<String, NodeStatus> byNode = new TreeMap<>();
        for (IndexedSnapshot s : hub.all()) {
            if (scope.permits(s.node())) {
                byNode.put(s.node(), NodeStatus.newBuilder().setNode(s.node()).build());
            }
        }
        for (NodeStatus st : sync.nodeStatuses()) {
            if (scope.permits(st.getNode())) {
                byNode.put(st.getNode(), st);
            }
        }
        ListNodesResponse.Builder page =
                ListNodesResponse.newBuilder().setSourceRevision(revision).setSourceProblem(sourceProblem.get());
        SortedMap<String, NodeStatus> rest = after == null ? byNode : byNode.tailMap(after, false);
        for (NodeStatus st : rest.values()) {
            if (page.getNodesCount() == pageSize) {
                page.setNextPageToken(
                        PageTokens.encode(page.getNodes(pageSize - 1).getNode()));
                break;
            }
            page.addNodes(st);
        }
        out.onNext(page.build());
        out.onCompleted();
    }

    @Override
    public void getSnapshot(GetSnapshotRequest request, StreamObserver<NodeSnapshot> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (!scope.permits(request.getNode())) {
            out.onError(denied(scope, request.getNode()).asRuntimeException());
            return;
        }
        if (!hub.isReady()) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("first calculation not done yet")
                    .asRuntimeException());
            return;
        }
        out.onNext(hub.current(request.getNode()).snapshot());
        out.onCompleted();
    }

    @Override
    public void explain(ExplainRequest request, StreamObserver<Explanation> out) {
        // Who asks comes first: a caller who may read nothing gets the same answer whatever it names.
        InspectionScope scope = authorizer.inspectionScope();
        if (scope.refusal() != null) {
            out.onError(scope.refusal().asRuntimeException());
            return;
        }
        if (!hub.isReady()) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("first calculation not done yet")
                    .asRuntimeException());
            return;
        }
        try {
            out.onNext(explain(request, scope));
            out.onCompleted();
        } catch (ScopeException e) {
            out.onError(e.status.asRuntimeException());
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
        } catch (UnsupportedOperationException e) {
            out.onError(Status.UNIMPLEMENTED.withDescription(e.getMessage()).asRuntimeException());
        }
    }

    Explanation explain(ExplainRequest request) {
        return explain(request, InspectionScope.all());
    }

    /**
     * Only the nodes the caller may read are looked in: a pod elsewhere is, to this caller, exactly
     * a pod that does not exist (by name the same refusal, by address not evaluated), so Explain
     * tells nobody what runs on nodes they may not read.
     */
    private Explanation explain(ExplainRequest request, InspectionScope scope) {
        EndpointDirectory dir = new EndpointDirectory(
                scope.isAll()
                        ? hub.all()
                        : hub.all().stream()
                                .filter(s -> scope.permits(s.node()))
                                .toList());
        String nowhere = scope.isAll() ? "any node" : "the nodes the caller may inspect (" + scope + ")";
        Tuple.Builder t = request.getTuple().toBuilder();
        if (!request.getFrom().isEmpty()) {
            t.setSrcIp(firstIp(dir, request.getFrom(), scope));
        }
        if (!request.getTo().isEmpty()) {
            t.setDstIp(firstIp(dir, request.getTo(), scope));
        }
        if (t.getSrcIp().isEmpty() || t.getDstIp().isEmpty()) {
            throw new IllegalArgumentException(
                    "need a source and a destination (tuple addresses or from/to pod names)");
        }
        if (t.getProtocol() == 0) {
            t.setProtocol(Protocol.TCP_VALUE); // as NetworkPolicy's own default
        }
        Tuple tuple = t.build();
        Optional<Located> src = dir.byIp(tuple.getSrcIp());
        Optional<Located> dst = dir.byIp(tuple.getDstIp());

        Explanation.Builder result = Explanation.newBuilder().setTuple(tuple);
        DirectionExplanation egress = src.map(l -> TierVisits.annotate(
                        explainer(l.node()).explain(tuple).getEgress(),
                        l.endpoint().getEndpoint(),
                        Decision.EGRESS))
                .orElse(notEvaluated("source is not an endpoint of " + nowhere));
        DirectionExplanation ingress = dst.map(l -> TierVisits.annotate(
                        explainer(l.node()).explain(tuple).getIngress(),
                        l.endpoint().getEndpoint(),
                        Decision.INGRESS))
                .orElse(notEvaluated("destination is not an endpoint of " + nowhere));
        src.ifPresent(l -> result.setSource(l.endpoint().getId()));
        dst.ifPresent(l -> result.setDestination(l.endpoint().getId()));
        boolean denied = egress.getVerdict() == Verdict.VERDICT_DENY || ingress.getVerdict() == Verdict.VERDICT_DENY;
        return result.setEgress(egress)
                .setIngress(ingress)
                .setVerdict(denied ? Verdict.VERDICT_DENY : Verdict.VERDICT_ALLOW)
                .build();
    }

    /** One direction of a tuple as a node's published snapshot decides it (the flow history's far sides). */
    public DirectionExplanation decideOn(String node, Tuple tuple, boolean egress) {
        Explanation x = explainer(node).explain(tuple);
        return egress ? x.getEgress() : x.getIngress();
    }

    private static Status denied(InspectionScope scope, String node) {
        if (scope.refusal() != null) {
            return scope.refusal();
        }
        return Status.PERMISSION_DENIED.withDescription(
                "the caller may inspect " + scope + ", not node '" + node + "'");
    }

    private static final class ScopeException extends RuntimeException {
        final Status status;

        ScopeException(Status status) {
            super(status.getDescription(), null, false, false);
            this.status = status;
        }
    }

    private static Status clusterWideOnly(InspectionScope scope, String call) {
        if (scope.refusal() != null) {
            return scope.refusal();
        }
        return Status.PERMISSION_DENIED.withDescription(
                call + " needs a cluster-wide client; the caller may inspect " + scope);
    }

    /** ListNodes says why the source's latest load failed, as this tells ("" while it loads). */
    public void reportSourceProblemsFrom(Supplier<String> problem) {
        this.sourceProblem = problem;
    }

    /** Serves ListPolicyReceipts and ListLocalReceipts from these receipts (without: UNIMPLEMENTED). */
    public void serveReceiptsFrom(ReplicatedReceipts receipts) {
        this.receipts = new ReceiptCalls(receipts, hub);
    }

    @Override
    public void listPolicyReceipts(ListPolicyReceiptsRequest request, StreamObserver<ListPolicyReceiptsResponse> out) {
        InspectionScope scope = authorizer.inspectionScope();
        ReceiptCalls calls = receipts;
        if (!scope.isAll()) {
            // A policy's receipt names every node it applies to.
            out.onError(clusterWideOnly(scope, "ListPolicyReceipts").asRuntimeException());
        } else if (calls == null) {
            super.listPolicyReceipts(request, out);
        } else {
            calls.list(request, out);
        }
    }

    @Override
    public void listLocalReceipts(ListLocalReceiptsRequest request, StreamObserver<LocalReceipts> out) {
        InspectionScope scope = authorizer.inspectionScope();
        ReceiptCalls calls = receipts;
        if (!scope.isAll()) {
            out.onError(clusterWideOnly(scope, "ListLocalReceipts").asRuntimeException());
        } else if (calls == null) {
            super.listLocalReceipts(request, out);
        } else {
            calls.local(request, out);
        }
    }

    /** Serves GetPolicy from these objects (without: every policy is not found). */
    public void servePoliciesFrom(PolicySources sources) {
        this.policies = new PolicyObjects(sources);
    }

    @Override
    public void getPolicy(GetPolicyRequest request, StreamObserver<PolicySource> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (!scope.isAll()) {
            // A policy object can select pods on every node.
            out.onError(clusterWideOnly(scope, "GetPolicy").asRuntimeException());
            return;
        }
        try {
            out.onNext(policies.find(request.getId()));
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    /** Serves ListFlows from this history (without: UNIMPLEMENTED). */
    public void serveFlowsFrom(FlowHistory history) {
        this.flows = history;
    }

    @Override
    public void listFlows(ListFlowsRequest request, StreamObserver<ListFlowsResponse> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (!scope.isAll()) {
            // Flows come from every node: only a cluster-wide client may read them.
            out.onError(clusterWideOnly(scope, "ListFlows").asRuntimeException());
            return;
        }
        FlowHistory history = flows;
        if (history == null) {
            super.listFlows(request, out);
            return;
        }
        try {
            out.onNext(FlowQueries.answer(history, request));
            out.onCompleted();
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
        }
    }

    /** Serves ObserveVerdicts with this handler (the verdict relay). */
    public void serveVerdictsFrom(BiConsumer<ObserveVerdictsRequest, ServerCallStreamObserver<ObservedVerdict>> relay) {
        this.verdicts = relay;
    }

    @Override
    public void observeVerdicts(ObserveVerdictsRequest request, StreamObserver<ObservedVerdict> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (!scope.isAll()) {
            // Verdicts come from every node: only a cluster-wide client may watch them.
            out.onError(clusterWideOnly(scope, "ObserveVerdicts").asRuntimeException());
            return;
        }
        var relay = verdicts;
        if (relay == null) {
            super.observeVerdicts(request, out);
            return;
        }
        relay.accept(request, (ServerCallStreamObserver<ObservedVerdict>) out);
    }

    @Override
    public void describeEndpoint(DescribeEndpointRequest request, StreamObserver<EndpointDescription> out) {
        InspectionScope scope = authorizer.inspectionScope();
        if (!scope.isAll()) {
            // A description names the rules of every node that use the pod as a peer.
            out.onError(clusterWideOnly(scope, "DescribeEndpoint").asRuntimeException());
            return;
        }
        if (!hub.isReady()) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("first calculation not done yet")
                    .asRuntimeException());
            return;
        }
        try {
            out.onNext(describer.describe(request.getPod()));
            out.onCompleted();
        } catch (IllegalArgumentException e) {
            out.onError(Status.NOT_FOUND.withDescription(e.getMessage()).asRuntimeException());
        }
    }

    private static DirectionExplanation notEvaluated(String reason) {
        return DirectionExplanation.newBuilder()
                .setEvaluated(false)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setReason(reason)
                .build();
    }

    /** The pod's first address; a caller limited to some nodes is refused alike for missing pods and pods elsewhere. */
    private static String firstIp(EndpointDirectory dir, String name, InspectionScope scope) {
        Optional<String> ip = dir.byName(name)
                .filter(l -> l.endpoint().getEndpoint().getIpsCount() > 0)
                .map(l -> l.endpoint().getEndpoint().getIps(0));
        if (ip.isPresent()) {
            return ip.get();
        }
        if (!scope.isAll()) {
            throw new ScopeException(Status.PERMISSION_DENIED.withDescription(
                    "no endpoint named '" + name + "' on the nodes the caller may inspect (" + scope + ")"));
        }
        throw new IllegalArgumentException(
                "no endpoint named '" + name + "' (want namespace/pod of a running pod with an IP)");
    }

    private Explainer explainer(String node) {
        IndexedSnapshot s = hub.current(node);
        Compiled c = indexes.get(node);
        if (c == null || c.version() != s.version()) {
            c = new Compiled(s.version(), new Explainer(SnapshotIndex.compile(s.snapshot())));
            indexes.put(node, c);
        }
        return c.explainer();
    }
}
