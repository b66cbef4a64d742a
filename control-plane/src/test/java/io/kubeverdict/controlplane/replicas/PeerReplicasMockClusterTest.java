// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.receipts.ReportingAgent;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.runtime.grpc.ClientChannels;
import io.kubeverdict.testing.tier.MockApiTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two control-plane replicas on one mock API server, each node's agent streaming from one of them
 * (as the Service spreads them): either replica answers `wait` and `status` for both nodes, over
 * real gRPC between the replicas; a replica that goes away leaves its nodes lagging, never enforced.
 */
@MockKubernetes
@MockApiTest
class PeerReplicasMockClusterTest {
    private static final String OPS = "adminnetworkpolicy/ops";

    KubernetesMockServer server;
    KubernetesClient client;
    private final List<AutoCloseable> open = new ArrayList<>();

    record Run(int exit, String out, String err) {}

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private void cluster() {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "a", Map.of("app", "a"), "n1", List.of("10.0.1.1"), List.of()))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "b", Map.of("app", "b"), "n2", List.of("10.0.2.1"), List.of()))
                .create();
        AdminPolicyCrds.installAll(client);
        writeOps("Deny");
    }

    private void writeOps(String action) {
        client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                .resource(HouseWorld.anp("""
                        metadata: {name: ops}
                        spec: {priority: 1, subject: {namespaces: {}}, ingress: [{action: %s, from: [{namespaces: {}}]}]}
                        """.formatted(action)))
                .createOr(r -> r.update());
    }

    private ControlPlane controlPlane() throws Exception {
        ControlPlane cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO, Duration.ofMillis(100)));
        open.add(cp);
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        return cp;
    }

    /** Replica {@code name} asks the replicas at these ports (its own among them, as a fixed list may have it). */
    private void askPeers(ControlPlane cp, String name, Supplier<List<Integer>> ports) {
        PeerReplicas peers = new PeerReplicas(
                name,
                () -> ports.get().stream()
                        .map(p -> new PeerReplicas.Peer("", "127.0.0.1:" + p))
                        .toList(),
                target -> ClientChannels.open(target, null));
        open.add(peers);
        cp.askPeers(name, peers);
    }

    private ReportingAgent agent(ControlPlane cp, String node) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
        open.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        ReportingAgent a = ReportingAgent.connect(channel, node);
        open.add(a);
        return a;
    }

    private static Run live(ControlPlane cp, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--control-plane");
        all.add("127.0.0.1:" + cp.grpcPort());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void eitherReplicaAnswersForTheNodesStreamingFromTheOther() throws Exception {
        cluster();
        ControlPlane one = controlPlane();
        ControlPlane two = controlPlane();
        List<Integer> ports = List.of(one.grpcPort(), two.grpcPort());
        askPeers(one, "one", () -> ports);
        askPeers(two, "two", () -> ports);
        ReportingAgent n1 = agent(one, "n1");
        ReportingAgent n2 = agent(two, "n2");

        n1.applyAll();
        Run lagging = live(one, "wait", "--for=enforced", OPS, "--timeout=3s");
        assertThat(lagging.exit()).as(lagging.out() + lagging.err()).isEqualTo(1);
        assertThat(lagging.out() + lagging.err()).contains("n2").doesNotContain("n1");

        n2.applyAll();
        for (ControlPlane asked : List.of(one, two)) {
            Run done = live(asked, "wait", "--for=enforced", OPS, "--timeout=60s");
            assertThat(done.exit()).as(done.out() + done.err()).isZero();
            Run status = live(asked, "status", OPS, "-o", "json");
            assertThat(status.out()).contains("\"enforcedNodes\":2").contains("\"nodes\":2");
        }

        // A new generation: enforced again only once both nodes, on their own replicas, applied it.
        int before = n2.received();
        writeOps("Allow");
        n2.awaitReceived(before + 1);
        n2.applyAll();
        Run half = live(two, "wait", "--for=enforced", OPS, "--timeout=3s");
        assertThat(half.exit()).as(half.out() + half.err()).isEqualTo(1);
        assertThat(half.out() + half.err()).contains("n1").doesNotContain("n2 ");
        n1.awaitReceived(2);
        n1.applyAll();
        Run again = live(two, "wait", "--for=enforced", OPS, "--timeout=60s");
        assertThat(again.exit()).as(again.out() + again.err()).isZero();

        // Replica two goes (its agent with it): one does not know n2 runs the newest generation.
        writeOps("Pass");
        n1.awaitReceived(3);
        n1.applyAll();
        n2.close();
        two.close();
        Run gone = live(one, "wait", "--for=enforced", OPS, "--timeout=3s");
        assertThat(gone.exit()).as(gone.out() + gone.err()).isEqualTo(1);
        assertThat(gone.out() + gone.err()).contains("n2");
    }
}
