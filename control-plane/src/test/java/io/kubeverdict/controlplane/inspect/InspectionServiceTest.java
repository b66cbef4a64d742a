// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DescribeEndpointRequest;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointDescription;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class InspectionServiceTest {
    private final SnapshotHub hub = new SnapshotHub();
    private final PolicySyncService sync = new PolicySyncService(
            hub,
            new ControlPlaneMetrics(new SimpleMeterRegistry()),
            NodeAuthorizer.allowAll(),
            Executors.newSingleThreadExecutor(),
            PolicySyncService.Options.defaults());
    private final InspectionService inspection = new InspectionService(hub, sync, NodeAuthorizer.allowAll());

    @AfterEach
    void tearDown() {
        sync.close();
    }

    /** n1 holds x/a (10.0.0.1), isolated for ingress by x/deny (no rules); n2 holds x/b (10.0.0.2), open. */
    private void publishCluster() {
        hub.publish(
                NodeSnapshot.newBuilder()
                        .setNode("n1")
                        .addPolicies(ActivePolicy.newBuilder()
                                .setId(PolicyId.newBuilder().setTier("default").setName("x/deny"))
                                .setPolicy(Policy.getDefaultInstance()))
                        .addEndpoints(endpoint(
                                "a",
                                "10.0.0.1",
                                TierInfo.newBuilder()
                                        .setName("default")
                                        .setDefaultAction(Action.DENY)
                                        .addIngressPolicies("x/deny")
                                        .build()))
                        .build(),
                0);
        hub.publish(
                NodeSnapshot.newBuilder()
                        .setNode("n2")
                        .addEndpoints(endpoint("b", "10.0.0.2", null))
                        .build(),
                0);
        hub.markReady();
    }

    private static Endpoint endpoint(String pod, String ip, TierInfo tier) {
        WorkloadEndpoint.Builder we = WorkloadEndpoint.newBuilder().addIps(ip);
        if (tier != null) {
            we.addTiers(tier);
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                .setEndpoint(we)
                .build();
    }

    @Test
    void explainEvaluatesEgressAtTheSourceAndIngressAtTheDestination() {
        publishCluster();
        Explanation toA = call((StreamObserver<Explanation> o) -> inspection.explain(
                        ExplainRequest.newBuilder()
                                .setFrom("x/b")
                                .setTo("x/a")
                                .setTuple(Tuple.newBuilder().setDstPort(80))
                                .build(),
                        o))
                .get(0);
        assertThat(toA.getTuple().getSrcIp()).isEqualTo("10.0.0.2");
        assertThat(toA.getTuple().getProtocol()).isEqualTo(Protocol.TCP_VALUE);
        assertThat(toA.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
        assertThat(toA.getIngress().getEvaluated()).isTrue();
        assertThat(toA.getIngress().getIsolated()).isTrue();
        assertThat(toA.getEgress().getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
        assertThat(toA.getSource().getPod()).isEqualTo("b");
        assertThat(toA.getDestination().getPod()).isEqualTo("a");

        Explanation toB = call((StreamObserver<Explanation> o) -> inspection.explain(
                        ExplainRequest.newBuilder()
                                .setFrom("x/a")
                                .setTo("x/b")
                                .setTuple(Tuple.newBuilder()
                                        .setProtocol(Protocol.UDP_VALUE)
                                        .setDstPort(53))
                                .build(),
                        o))
                .get(0);
        assertThat(toB.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);

        Explanation external = call((StreamObserver<Explanation> o) -> inspection.explain(
                        ExplainRequest.newBuilder()
                                .setTuple(Tuple.newBuilder()
                                        .setSrcIp("192.0.2.1")
                                        .setDstIp("10.0.0.1")
                                        .setProtocol(Protocol.TCP_VALUE)
                                        .setDstPort(80))
                                .build(),
                        o))
                .get(0);
        assertThat(external.getEgress().getEvaluated()).isFalse();
        assertThat(external.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
    }

    @Test
    void unknownPodIsInvalidArgumentAndNothingBeforeTheFirstCalculation() {
        assertThat(error((StreamObserver<NodeSnapshot> o) -> inspection.getSnapshot(
                        GetSnapshotRequest.newBuilder().setNode("n1").build(), o)))
                .isEqualTo(Status.Code.UNAVAILABLE);
        publishCluster();
        assertThat(error((StreamObserver<Explanation> o) -> inspection.explain(
                        ExplainRequest.newBuilder()
                                .setFrom("x/nope")
                                .setTo("x/a")
                                .build(),
                        o)))
                .isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(call((StreamObserver<NodeSnapshot> o) -> inspection.getSnapshot(
                                GetSnapshotRequest.newBuilder().setNode("n1").build(), o))
                        .get(0)
                        .getEndpointsCount())
                .isEqualTo(1);
        ListNodesResponse nodes = call((StreamObserver<ListNodesResponse> o) ->
                        inspection.listNodes(ListNodesRequest.getDefaultInstance(), o))
                .get(0);
        assertThat(nodes.getNodesList()).extracting(n -> n.getNode()).containsExactly("n1", "n2");
        assertThat(nodes.getNodesList()).noneMatch(n -> n.getConnected());
        assertThat(nodes.getSourceRevision()).isEmpty();

        hub.publishSourceRevision("abc123");
        assertThat(call((StreamObserver<ListNodesResponse> o) ->
                                inspection.listNodes(ListNodesRequest.getDefaultInstance(), o))
                        .get(0)
                        .getSourceRevision())
                .isEqualTo("abc123");
    }

    /**
     * With token authentication, a call without an accepted token (here: none in the Context) is
     * refused before anything is looked at: the same answer for an existing and a missing pod, and
     * also before the first calculation (the refusal does not wait for the cluster's state).
     */
    @Test
    void anUnauthenticatedExplainIsRefusedAlikeForExistingAndMissingPodsBeforeAnyWork() {
        InspectionService guarded = new InspectionService(hub, sync, NodeAuthorizer.requireAgentToken());
        ExplainRequest existing = ExplainRequest.newBuilder()
                .setFrom("x/a")
                .setTuple(Tuple.newBuilder().setDstIp("192.0.2.1"))
                .build();
        ExplainRequest missing = ExplainRequest.newBuilder()
                .setFrom("nope/nope")
                .setTuple(Tuple.newBuilder().setDstIp("192.0.2.1"))
                .build();
        assertThat(status((StreamObserver<Explanation> o) -> guarded.explain(existing, o))
                        .getCode())
                .as("before the first calculation")
                .isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(status((StreamObserver<EndpointDescription> o) -> guarded.describeEndpoint(
                                DescribeEndpointRequest.newBuilder()
                                        .setPod("x/a")
                                        .build(),
                                o))
                        .getCode())
                .isEqualTo(Status.Code.UNAUTHENTICATED);
        publishCluster();
        Status forExisting = status((StreamObserver<Explanation> o) -> guarded.explain(existing, o));
        Status forMissing = status((StreamObserver<Explanation> o) -> guarded.explain(missing, o));
        assertThat(forExisting.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(forMissing.getCode()).isEqualTo(forExisting.getCode());
        assertThat(forMissing.getDescription()).isEqualTo(forExisting.getDescription());
        Status byIp = status((StreamObserver<Explanation> o) -> guarded.explain(
                ExplainRequest.newBuilder()
                        .setTuple(Tuple.newBuilder().setSrcIp("192.0.2.7").setDstIp("192.0.2.1"))
                        .build(),
                o));
        assertThat(byIp.getCode())
                .as("not an empty explanation for addresses of no pod")
                .isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    @Test
    void listFlowsIsRefusedToCallersWhoMayNotInspectTheWholeCluster() {
        InspectionService guarded = new InspectionService(hub, sync, NodeAuthorizer.requireAgentToken());
        guarded.serveFlowsFrom(new io.kubeverdict.controlplane.flows.FlowHistory(
                new io.kubeverdict.controlplane.flows.FlowHistory.Limits(
                        java.time.Duration.ofHours(1), java.time.Duration.ofMinutes(1), 10, 1 << 20)));
        publishCluster();
        assertThat(status((StreamObserver<io.kubeverdict.proto.v1.ListFlowsResponse> o) ->
                                guarded.listFlows(io.kubeverdict.proto.v1.ListFlowsRequest.getDefaultInstance(), o))
                        .getCode())
                .isEqualTo(Status.Code.UNAUTHENTICATED);
    }

    interface Call<T> {
        void run(StreamObserver<T> o);
    }

    private static <T> List<T> call(Call<T> c) {
        List<T> out = new ArrayList<>();
        Throwable[] err = new Throwable[1];
        c.run(new StreamObserver<>() {
            public void onNext(T v) {
                out.add(v);
            }

            public void onError(Throwable t) {
                err[0] = t;
            }

            public void onCompleted() {}
        });
        if (err[0] != null) {
            throw new AssertionError(err[0]);
        }
        return out;
    }

    private static <T> Status status(Call<T> c) {
        Status[] status = {null};
        c.run(new StreamObserver<>() {
            public void onNext(T v) {}

            public void onError(Throwable t) {
                status[0] = Status.fromThrowable(t);
            }

            public void onCompleted() {
                status[0] = Status.OK;
            }
        });
        return status[0];
    }

    private static <T> Status.Code error(Call<T> c) {
        Status.Code[] code = {null};
        c.run(new StreamObserver<>() {
            public void onNext(T v) {}

            public void onError(Throwable t) {
                code[0] = Status.fromThrowable(t).getCode();
            }

            public void onCompleted() {}
        });
        return code[0];
    }
}
