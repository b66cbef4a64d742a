// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Staged policies through the API server: a NetworkPolicy annotated {@code kube-verdict.io/staged:
 * "true"} reaches the calculation as staged (sent as {@code staged:ns/name}, listed only in the
 * would-be tiers), and removing the annotation enforces it in place.
 */
@MockKubernetes
@MockApiTest
class StagedPoliciesMockClusterTest {
    KubernetesMockServer server;
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

    @Test
    void anAnnotatedNetworkPolicyIsStagedAndRemovingTheAnnotationEnforcesIt() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(RealCalculationMockClusterTest.pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
                .create();
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(client, Duration.ZERO));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();

        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .resource(new NetworkPolicyBuilder()
                        .withNewMetadata()
                        .withNamespace("x")
                        .withName("deny-all")
                        .addToAnnotations("kube-verdict.io/staged", "true")
                        .endMetadata()
                        .withNewSpec()
                        .withNewPodSelector()
                        .endPodSelector()
                        .withPolicyTypes("Ingress")
                        .endSpec()
                        .build())
                .create();

        NodeSnapshot staged = awaitSnapshot(s -> policyNames(s).contains("staged:x/deny-all"));
        assertThat(policyNames(staged)).doesNotContain("x/deny-all");
        assertThat(staged.getEndpointsList()).hasSize(1);
        var a = staged.getEndpoints(0).getEndpoint();
        assertThat(a.getTiersList())
                .as("enforced tiers do not list a staged policy")
                .noneSatisfy(t -> assertThat(listed(t)).anyMatch(n -> n.contains("deny-all")));
        assertThat(a.getStagedTiersList())
                .as("the would-be tiers list it")
                .anySatisfy(t -> assertThat(t.getIngressPoliciesList()).contains("staged:x/deny-all"));

        client.network()
                .v1()
                .networkPolicies()
                .inNamespace("x")
                .withName("deny-all")
                .edit(p -> new NetworkPolicyBuilder(p)
                        .editMetadata()
                        .removeFromAnnotations("kube-verdict.io/staged")
                        .endMetadata()
                        .build());

        NodeSnapshot live = awaitSnapshot(s -> policyNames(s).contains("x/deny-all"));
        assertThat(policyNames(live)).doesNotContain("staged:x/deny-all");
        var promoted = live.getEndpoints(0).getEndpoint();
        assertThat(promoted.getTiersList())
                .as("promoted: enforced")
                .anySatisfy(t -> assertThat(t.getIngressPoliciesList()).contains("x/deny-all"));
        assertThat(promoted.getStagedTiersList()).as("nothing staged any more").isEmpty();
    }

    private NodeSnapshot awaitSnapshot(Predicate<NodeSnapshot> done) throws InterruptedException {
        var inspection = ControlPlaneInspectionGrpc.newBlockingStub(channel);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        NodeSnapshot s;
        do {
            s = inspection.getSnapshot(
                    GetSnapshotRequest.newBuilder().setNode("n1").build());
            if (done.test(s)) {
                return s;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("snapshot of n1 never reached the expected state; last: " + policyNames(s));
    }

    private static List<String> policyNames(NodeSnapshot s) {
        return s.getPoliciesList().stream()
                .map(ActivePolicy::getId)
                .map(id -> id.getName())
                .toList();
    }

    private static List<String> listed(TierInfo t) {
        return Stream.concat(t.getIngressPoliciesList().stream(), t.getEgressPoliciesList().stream())
                .toList();
    }
}
