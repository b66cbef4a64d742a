// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.auth.NodeAuthorizer;
import io.kubeverdict.controlplane.inspect.InspectionService;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.proto.v1.AppliedReport;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListNodesRequest;
import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.Gauge;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Node names come from clients: names the cluster does not have leave no state behind (ListNodes,
 * hub entries, metric series) once their streams end, and ListNodes pages.
 */
class ClientNamedNodesTest {
    private static final NodeSnapshot KNOWN =
            snapshot("node-1", List.of(), List.of(), List.of(podEndpoint("x", "a", "10.0.0.1")));

    private SyncServerFixture f;
    private GrpcServer inspectEndpoint;
    private ManagedChannel inspectChannel;
    private ControlPlaneInspectionGrpc.ControlPlaneInspectionBlockingStub inspection;

    @BeforeEach
    void setUp() throws Exception {
        f = new SyncServerFixture();
        f.hub.publish(KNOWN, 0);
        f.hub.markReady();
        inspectEndpoint = GrpcEndpoint.create(
                        new InetSocketAddress("127.0.0.1", 0),
                        null,
                        List.<BindableService>of(new InspectionService(f.hub, f.sync, NodeAuthorizer.allowAll())))
                .start();
        // The client's default 4 MiB inbound limit, as grpcurl and the agents have it.
        inspectChannel = NettyChannelBuilder.forAddress("127.0.0.1", inspectEndpoint.port())
                .usePlaintext()
                .build();
        inspection = ControlPlaneInspectionGrpc.newBlockingStub(inspectChannel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        inspectChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        inspectEndpoint.close();
        f.close();
    }

    private List<NodeStatus> allPages(int pageSize, List<Integer> pageSizes) {
        List<NodeStatus> out = new ArrayList<>();
        String token = "";
        do {
            ListNodesResponse page = inspection.listNodes(ListNodesRequest.newBuilder()
                    .setPageSize(pageSize)
                    .setPageToken(token)
                    .build());
            pageSizes.add(page.getNodesCount());
            out.addAll(page.getNodesList());
            token = page.getNextPageToken();
        } while (!token.isEmpty());
        return out;
    }

    private List<String> lagSeries() {
        List<String> nodes = new ArrayList<>();
        for (Gauge g :
                f.metrics.registry().find("kubeverdict_node_lag_messages").gauges()) {
            nodes.add(g.getId().getTag("node"));
        }
        return nodes;
    }

    @Test
    void madeUpNamesLeaveWhenTheirStreamsEndAndAddNoMetricSeries() throws Exception {
        int madeUp = 1500;
        List<TestAgent> agents = new ArrayList<>();
        // A long agent version is cut: what a client says stays small.
        String longVersion = "v".repeat(100_000);
        for (int i = 0; i < madeUp; i++) {
            String node = "made-up-" + "n".repeat(200) + "-" + i;
            agents.add(TestAgent.connect(f.channel, node, true, longVersion));
        }
        TestAgent real = f.agent("node-1");
        for (TestAgent a : agents) {
            a.readUntilInSync(); // unknown names still get an (empty) snapshot and InSync
        }
        real.readUntilInSync();

        List<Integer> sizes = new ArrayList<>();
        List<NodeStatus> listed = allPages(0, sizes);
        assertThat(listed).hasSize(madeUp + 1);
        assertThat(sizes).containsExactly(500, 500, 500, 1);
        assertThat(listed).extracting(NodeStatus::getNode).isSorted().doesNotHaveDuplicates();
        assertThat(listed)
                .allSatisfy(s -> assertThat(s.getAgentVersion().length())
                        .isLessThanOrEqualTo(PolicySyncService.MAX_AGENT_VERSION));
        assertThat(lagSeries()).containsExactly("node-1");

        // Reports from made-up names do not create series either.
        PolicySyncGrpc.newBlockingStub(f.channel)
                .reportApplied(AppliedReport.newBuilder()
                        .setNode(agents.get(0).node())
                        .setAppliedSequence(1)
                        .build());
        assertThat(lagSeries()).containsExactly("node-1");

        for (TestAgent a : agents) {
            a.close();
        }
        await(() -> inspection.listNodes(ListNodesRequest.getDefaultInstance()).getNodesCount() == 1);
        NodeStatus left =
                inspection.listNodes(ListNodesRequest.getDefaultInstance()).getNodes(0);
        assertThat(left.getNode()).isEqualTo("node-1");
        assertThat(left.getConnected()).isTrue();
        assertThat(f.hub.entries()).isEqualTo(1);

        // A node of the cluster stays listed after its agent leaves, and its series goes.
        real.close();
        await(() -> lagSeries().isEmpty());
        await(() -> !inspection
                .listNodes(ListNodesRequest.getDefaultInstance())
                .getNodes(0)
                .getConnected());
        assertThat(inspection.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList())
                .extracting(NodeStatus::getNode)
                .containsExactly("node-1");
    }

    @Test
    void aNameThatJoinsTheClusterWhileConnectedGetsItsSeriesAtItsNextReport() throws Exception {
        try (TestAgent early = f.agent("node-2")) {
            early.readUntilInSync();
            assertThat(lagSeries()).isEmpty();
            NodeSnapshot joined = snapshot("node-2", List.of(), List.of(), List.of(podEndpoint("x", "b", "10.0.0.2")));
            f.hub.publish(joined, 0);
            early.readUntil(joined);
            PolicySyncGrpc.newBlockingStub(f.channel)
                    .reportApplied(AppliedReport.newBuilder()
                            .setNode("node-2")
                            .setAppliedSequence(early.view.received.size())
                            .build());
            assertThat(lagSeries()).containsExactly("node-2");
        }
        await(() -> lagSeries().isEmpty());
        // Known now: it stays listed while disconnected.
        assertThat(inspection.listNodes(ListNodesRequest.getDefaultInstance()).getNodesList())
                .extracting(NodeStatus::getNode)
                .containsExactly("node-1", "node-2");
    }

    @Test
    void pageSizeIsCappedAndTokensAreChecked() throws Exception {
        List<TestAgent> agents = new ArrayList<>();
        try {
            for (int i = 0; i < 1200; i++) {
                agents.add(f.agent(String.format("n-%04d", i)));
            }
            for (TestAgent a : agents) {
                a.readUntilInSync();
            }
            List<Integer> sizes = new ArrayList<>();
            assertThat(allPages(100_000, sizes)).hasSize(1201);
            assertThat(sizes).containsExactly(1000, 201);
            sizes.clear();
            List<NodeStatus> small = allPages(7, sizes);
            assertThat(small)
                    .extracting(NodeStatus::getNode)
                    .isSorted()
                    .doesNotHaveDuplicates()
                    .hasSize(1201);
            assertThat(sizes).hasSize(172).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(7));
            assertThatThrownBy(() -> inspection.listNodes(ListNodesRequest.newBuilder()
                            .setPageToken("not a token!")
                            .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        } finally {
            agents.forEach(TestAgent::close);
        }
    }

    @Test
    void namesThatNoNodeCouldHaveAreRefused() {
        for (String bad : List.of("Node-1", "node_1", "-node", "node.", "a".repeat(254), "node 1", "n\u00e9")) {
            assertThatThrownBy(() -> PolicySyncGrpc.newBlockingStub(f.channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .sync(SyncRequest.newBuilder().setNode(bad).build())
                            .next())
                    .as(bad)
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        }
        assertThat(f.hub.entries()).isEqualTo(1);
    }

    static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 30 s");
            }
            Thread.sleep(20);
        }
    }
}
