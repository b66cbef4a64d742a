// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.receipts;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ListPolicyReceiptsRequest;
import io.kubeverdict.proto.v1.ListPolicyReceiptsResponse;
import io.kubeverdict.proto.v1.PolicyReceipt;
import io.kubeverdict.testing.tier.MockApiTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Receipts with the Kubernetes source: NetworkPolicies written through fabric8's mock API server
 * (CRUD), the real calculation, agents played by the test over gRPC. The receipt follows the
 * object's resourceVersion and generation as the API server gives them, and goes with the object.
 */
@MockKubernetes
@MockApiTest
class ReceiptsMockClusterTest {
    private static final String DENY = "networkpolicy/x/deny";

    KubernetesClient client;
    private ControlPlane cp;
    private ManagedChannel channel;

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    private static NetworkPolicy deny(String admitted) {
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace("x")
                .withName("deny")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .endPodSelector()
                .withPolicyTypes("Ingress")
                .addNewIngress()
                .addNewFrom()
                .withNewPodSelector()
                .withMatchLabels(Map.of("v", admitted))
                .endPodSelector()
                .endFrom()
                .endIngress()
                .endSpec()
                .build();
    }

    private ListPolicyReceiptsResponse receipts(String... names) {
        return ControlPlaneInspectionGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .listPolicyReceipts(ListPolicyReceiptsRequest.newBuilder()
                        .addAllPolicies(List.of(names))
                        .build());
    }

    private PolicyReceipt awaitReceipt(Predicate<PolicyReceipt> condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            ListPolicyReceiptsResponse r = receipts(DENY);
            if (r.getReceiptsCount() == 1 && condition.test(r.getReceipts(0))) {
                return r.getReceipts(0);
            }
            assertThat(System.nanoTime() - end).as("receipt now: " + r).isNegative();
            Thread.sleep(20);
        }
    }

    private int waitCommand(String timeout) {
        return ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(new StringWriter()))
                .execute(
                        "wait",
                        "--for=enforced",
                        DENY,
                        "--timeout=" + timeout,
                        "--control-plane",
                        "127.0.0.1:" + cp.grpcPort());
    }

    @Test
    void theReceiptFollowsTheObjectsWritesAndGoesWithIt() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "a", Map.of(), "n1", List.of("10.0.1.1"), List.of()))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(Objects.pod("x", "b", Map.of(), "n2", List.of("10.0.2.1"), List.of()))
                .create();
        NetworkPolicy written = client.network()
                .networkPolicies()
                .inNamespace("x")
                .resource(deny("1"))
                .create();
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO, Duration.ofMillis(100)));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();

        try (ReportingAgent n1 = ReportingAgent.connect(channel, "n1");
                ReportingAgent n2 = ReportingAgent.connect(channel, "n2")) {
            PolicyReceipt first = awaitReceipt(r -> r.getCalculated());
            assertThat(first.getResourceVersion())
                    .isEqualTo(written.getMetadata().getResourceVersion());
            assertThat(first.getNodes()).isEqualTo(2);
            assertThat(first.getEnforced()).isFalse();
            assertThat(waitCommand("3s")).isEqualTo(1);
            n1.apply(0);
            n2.apply(0);
            assertThat(awaitReceipt(PolicyReceipt::getEnforced).getEnforcedNodes())
                    .isEqualTo(2);
            assertThat(waitCommand("30s")).isZero();

            NetworkPolicy changed = client.network()
                    .networkPolicies()
                    .inNamespace("x")
                    .resource(deny("2"))
                    .update();
            String version = changed.getMetadata().getResourceVersion();
            PolicyReceipt second = awaitReceipt(r -> r.getResourceVersion().equals(version) && r.getCalculated());
            assertThat(second.getEnforced()).isFalse();
            if (changed.getMetadata().getGeneration() != null) {
                assertThat(second.getGeneration())
                        .isEqualTo(changed.getMetadata().getGeneration());
            }
            n1.awaitReceived(2);
            n2.awaitReceived(2);
            n1.applyAll();
            assertThat(receipts(DENY).getReceipts(0).getNodeReceiptsList())
                    .filteredOn(n -> !n.getEnforced())
                    .extracting(n -> n.getNode())
                    .containsExactly("n2");
            n2.applyAll();
            awaitReceipt(PolicyReceipt::getEnforced);

            client.network().networkPolicies().inNamespace("x").withName("deny").delete();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (receipts(DENY).getUnknownCount() == 0) {
                assertThat(System.nanoTime() - end).as("receipt gone").isNegative();
                Thread.sleep(20);
            }
            assertThat(receipts().getReceiptsList()).isEmpty();
        }
    }
}
