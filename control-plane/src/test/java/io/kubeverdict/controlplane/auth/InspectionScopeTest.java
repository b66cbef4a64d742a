// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.BindableService;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.inspect.InspectionService;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.kubeverdict.runtime.grpc.ServerTls;
import io.kubeverdict.testing.pki.TestPki;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Under mTLS a node's certificate inspects only its own node; an operator's certificate reads all. */
class InspectionScopeTest {
    @TempDir
    Path dir;

    private TestPki pki;
    private GrpcServer endpoint;
    private PolicySyncService sync;
    private ExecutorService executor;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        pki = new TestPki(dir, "kube-verdict-test");
        Path[] server = pki.issue("server", "kube-verdict-control-plane", "localhost");
        SnapshotHub hub = new SnapshotHub();
        hub.publish(node("n1", "a", "10.0.0.1"), 0);
        hub.publish(node("n2", "b", "10.0.0.2"), 0);
        hub.publish(node("n3", "c", "10.0.0.3"), 0);
        hub.markReady();
        executor = Executors.newFixedThreadPool(2);
        NodeAuthorizer authorizer = NodeAuthorizer.requireNodeCertificate();
        sync = new PolicySyncService(
                hub,
                new ControlPlaneMetrics(new SimpleMeterRegistry()),
                authorizer,
                executor,
                PolicySyncService.Options.defaults());
        endpoint = GrpcEndpoint.create(
                        new InetSocketAddress("127.0.0.1", 0),
                        new ServerTls(server[0], server[1], pki.caFile),
                        List.<BindableService>of(sync, new InspectionService(hub, sync, authorizer)))
                .start();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        endpoint.close();
        sync.close();
        executor.shutdownNow();
    }

    private static NodeSnapshot node(String node, String pod, String ip) {
        return NodeSnapshot.newBuilder()
                .setNode(node)
                .addEndpoints(Endpoint.newBuilder()
                        .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                        .setEndpoint(WorkloadEndpoint.newBuilder().addIps(ip)))
                .build();
    }

    private ControlPlaneInspectionBlockingStub as(String file, String cn, String... dns) throws Exception {
        Path[] c = pki.issue(file, cn, dns);
        ChannelCredentials creds = TlsChannelCredentials.newBuilder()
                .keyManager(c[0].toFile(), c[1].toFile())
                .trustManager(pki.caFile.toFile())
                .build();
        ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", endpoint.port(), creds)
                .build();
        channels.add(ch);
        return ControlPlaneInspectionGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    private static List<String> listed(ControlPlaneInspectionBlockingStub stub) {
        return stub.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList().stream()
                .map(NodeStatus::getNode)
                .toList();
    }

    private static NodeSnapshot snapshot(ControlPlaneInspectionBlockingStub stub, String node) {
        return stub.getSnapshot(GetSnapshotRequest.newBuilder().setNode(node).build());
    }

    private static Explanation explain(ControlPlaneInspectionBlockingStub stub, String from, String to) {
        return stub.explain(ExplainRequest.newBuilder()
                .setFrom(from)
                .setTo(to)
                .setTuple(Tuple.newBuilder().setDstPort(80))
                .build());
    }

    private static Status refusal(ThrowingCallable call) {
        try {
            call.call();
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        throw new AssertionError("the call succeeded");
    }

    private static void denied(ThrowingCallable call) {
        assertThatThrownBy(call)
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
    }

    @Test
    void aNodeCertificateInspectsOnlyItsOwnNode() throws Exception {
        ControlPlaneInspectionBlockingStub n1 = as("n1", "system:node:n1");
        assertThat(listed(n1)).containsExactly("n1");
        assertThat(snapshot(n1, "n1").getEndpointsCount()).isEqualTo(1);
        denied(() -> snapshot(n1, "n2"));
        denied(() -> snapshot(n1, "not-a-node"));
        // Explaining needs each side's node snapshot: another node's pod is refused by name exactly
        // as a pod that does not exist (no oracle for what runs elsewhere)...
        Status elsewhere = refusal(() -> explain(n1, "x/a", "x/b"));
        Status missing = refusal(() -> explain(n1, "x/a", "x/nope"));
        assertThat(elsewhere.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(missing.getCode()).isEqualTo(elsewhere.getCode());
        assertThat(missing.getDescription())
                .isEqualTo(elsewhere.getDescription().replace("x/b", "x/nope"));
        denied(() -> explain(n1, "x/b", "x/a"));
        // ...and by address another node's pod is, like an address of no pod, not evaluated.
        Explanation otherNode = n1.explain(ExplainRequest.newBuilder()
                .setTuple(Tuple.newBuilder()
                        .setSrcIp("10.0.0.1")
                        .setDstIp("10.0.0.2")
                        .setDstPort(80))
                .build());
        Explanation noPod = n1.explain(ExplainRequest.newBuilder()
                .setTuple(Tuple.newBuilder()
                        .setSrcIp("10.0.0.1")
                        .setDstIp("192.0.2.9")
                        .setDstPort(80))
                .build());
        assertThat(otherNode.getIngress()).isEqualTo(noPod.getIngress());
        assertThat(otherNode.hasDestination()).isFalse();
        // Its own pod against an address of no node is fine.
        Explanation own = n1.explain(ExplainRequest.newBuilder()
                .setTuple(Tuple.newBuilder()
                        .setSrcIp("192.0.2.1")
                        .setDstIp("10.0.0.1")
                        .setDstPort(80))
                .build());
        assertThat(own.getDestination().getPod()).isEqualTo("a");
    }

    @Test
    void dnsNamesOfACertificateAreItsNodes() throws Exception {
        ControlPlaneInspectionBlockingStub agent = as("agent-n2", "kube-verdict-agent", "n2", "n3");
        assertThat(listed(agent)).containsExactly("n2", "n3");
        assertThat(explain(agent, "x/b", "x/c").getSource().getPod()).isEqualTo("b");
        denied(() -> snapshot(agent, "n1"));
    }

    @Test
    void aNodeCertificateWithAnEmptyNodeNameSeesNothing() throws Exception {
        ControlPlaneInspectionBlockingStub empty = as("empty", "system:node:");
        assertThat(listed(empty)).isEmpty();
        denied(() -> snapshot(empty, "n1"));
        denied(() -> snapshot(empty, ""));
    }

    @Test
    void anOperatorCertificateReadsEveryNode() throws Exception {
        ControlPlaneInspectionBlockingStub operator = as("operator", "kube-verdict-operator");
        assertThat(listed(operator)).containsExactly("n1", "n2", "n3");
        assertThat(snapshot(operator, "n2").getEndpoints(0).getId().getPod()).isEqualTo("b");
        Explanation e = explain(operator, "x/a", "x/b");
        assertThat(e.getSource().getPod()).isEqualTo("a");
        assertThat(e.getDestination().getPod()).isEqualTo("b");
    }
}
