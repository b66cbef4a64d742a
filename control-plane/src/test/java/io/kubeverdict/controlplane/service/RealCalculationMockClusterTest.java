// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.GetSnapshotRequest;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The service with the engine's real calculation against fabric8's mock API server (CRUD):
 * creating, changing and deleting namespaces, pods and policies yields exactly the ordered
 * deltas the contract promises, after InSync, on a real socket.
 */
@MockKubernetes
@MockApiTest
class RealCalculationMockClusterTest {
    KubernetesMockServer server;
    KubernetesClient client;
    private ControlPlane cp;
    private ManagedChannel channel;

    static Pod pod(String ns, String name, String node, String ip, Map<String, String> labels) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .addNewContainer()
                .withName("c")
                .withImage("i")
                .addNewPort()
                .withName("http")
                .withContainerPort(80)
                .endPort()
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (cp != null) {
            cp.close();
        }
    }

    /** Reads messages until {@code n} arrived or until the stream has been quiet for the given kinds. */
    private static List<ToAgent> read(TestAgent agent, int n) throws InterruptedException {
        List<ToAgent> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(agent.next());
        }
        return out;
    }

    @Test
    void policyLifecycleProducesOrderedDeltas() throws Exception {
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .addToLabels("team", "x")
                        .endMetadata()
                        .build())
                .create();
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("y")
                        .addToLabels("team", "y")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "b", "n2", "10.0.0.2", Map.of("app", "b")))
                .create();
        client.pods()
                .inNamespace("y")
                .resource(pod("y", "c", "n2", "10.0.1.3", Map.of("app", "c")))
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

        try (TestAgent n1 = TestAgent.connect(channel, "n1", true)) {
            n1.readUntilInSync();
            assertThat(n1.state("n1").getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("a");
            assertThat(n1.state("n1").getPoliciesList()).isEmpty();

            // A policy selecting a: set, then policy, then endpoint (now isolated).
            client.network()
                    .v1()
                    .networkPolicies()
                    .inNamespace("x")
                    .resource(new NetworkPolicyBuilder()
                            .withNewMetadata()
                            .withNamespace("x")
                            .withName("allow-b")
                            .endMetadata()
                            .withNewSpec()
                            .withNewPodSelector()
                            .addToMatchLabels("app", "a")
                            .endPodSelector()
                            .addNewIngress()
                            .addNewFrom()
                            .withNewPodSelector()
                            .addToMatchLabels("app", "b")
                            .endPodSelector()
                            .endFrom()
                            .addNewPort()
                            .withPort(new IntOrString("http"))
                            .endPort()
                            .endIngress()
                            .endSpec()
                            .build())
                    .create();
            List<ToAgent> added = new ArrayList<>();
            while (added.isEmpty()
                    || added.get(added.size() - 1).getPayloadCase() != PayloadCase.WORKLOAD_ENDPOINT_UPDATE) {
                added.add(n1.nextDelta());
            }
            assertThat(added)
                    .extracting(ToAgent::getPayloadCase)
                    .startsWith(PayloadCase.IP_SET_UPDATE)
                    .contains(PayloadCase.ACTIVE_POLICY_UPDATE)
                    .endsWith(PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
            assertThat(added)
                    .allSatisfy(m -> assertThat(m.getEventTimeUnixNanos()).isPositive());
            ToAgent ep = added.get(added.size() - 1);
            assertThat(ep.getWorkloadEndpointUpdate().getEndpoint().getTiersList())
                    .anySatisfy(t -> assertThat(t.getIngressPoliciesList()).contains("x/allow-b"));
            assertThat(n1.state("n1").getIpSetsList())
                    .anySatisfy(s -> assertThat(s.getMembersList()).containsExactly("10.0.0.2"));

            // b2 joins the peer set: one member delta, nothing else.
            client.pods()
                    .inNamespace("x")
                    .resource(pod("x", "b2", "n3", "10.0.0.4", Map.of("app", "b")))
                    .create();
            ToAgent delta = n1.nextDelta();
            assertThat(delta.getPayloadCase()).isEqualTo(PayloadCase.IP_SET_DELTA_UPDATE);
            assertThat(delta.getIpSetDeltaUpdate().getAddedMembersList()).containsExactly("10.0.0.4");

            // Relabelling b out of the peer set removes its address (one message: with half the
            // set changing, the service sends the whole set instead of a delta).
            client.pods()
                    .inNamespace("x")
                    .withName("b")
                    .edit(p -> new PodBuilder(p)
                            .editMetadata()
                            .addToLabels("app", "not-b")
                            .endMetadata()
                            .build());
            ToAgent removed = n1.nextDelta();
            assertThat(removed.getPayloadCase()).isIn(PayloadCase.IP_SET_DELTA_UPDATE, PayloadCase.IP_SET_UPDATE);
            assertThat(n1.state("n1").getIpSetsList())
                    .anySatisfy(s -> assertThat(s.getMembersList()).containsExactly("10.0.0.4"))
                    .noneSatisfy(s -> assertThat(s.getMembersList()).contains("10.0.0.2"));

            // Live explain agrees: b2 -> a:80 allowed by the rule, c -> a:80 denied.
            Explanation ok = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .explain(ExplainRequest.newBuilder()
                            .setFrom("x/b2")
                            .setTo("x/a")
                            .setTuple(Tuple.newBuilder()
                                    .setProtocol(Protocol.TCP_VALUE)
                                    .setDstPort(80))
                            .build());
            assertThat(ok.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
            assertThat(ok.getIngress().getPolicy().getName()).isEqualTo("x/allow-b");
            Explanation no = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .explain(ExplainRequest.newBuilder()
                            .setFrom("y/c")
                            .setTo("x/a")
                            .setTuple(Tuple.newBuilder()
                                    .setProtocol(Protocol.TCP_VALUE)
                                    .setDstPort(80))
                            .build());
            assertThat(no.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);

            // Deleting the policy: endpoint first, then the policy, then its sets.
            client.network()
                    .v1()
                    .networkPolicies()
                    .inNamespace("x")
                    .withName("allow-b")
                    .delete();
            List<ToAgent> gone = new ArrayList<>();
            while (gone.isEmpty()
                    || gone.get(gone.size() - 1).getPayloadCase() != PayloadCase.IP_SET_REMOVE
                    || !n1.state("n1").getIpSetsList().isEmpty()) {
                gone.add(n1.nextDelta());
            }
            assertThat(gone.get(0).getPayloadCase()).isEqualTo(PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
            assertThat(gone).extracting(ToAgent::getPayloadCase).contains(PayloadCase.ACTIVE_POLICY_REMOVE);
            assertThat(gone.indexOf(gone.stream()
                            .filter(ToAgent::hasActivePolicyRemove)
                            .findFirst()
                            .orElseThrow()))
                    .isLessThan(gone.indexOf(gone.stream()
                            .filter(ToAgent::hasIpSetRemove)
                            .findFirst()
                            .orElseThrow()));

            // Deleting a's namespace's pod removes the endpoint; the agent ends equal to the snapshot.
            client.pods().inNamespace("x").withName("a").delete();
            assertThat(n1.nextDelta().getPayloadCase()).isEqualTo(PayloadCase.WORKLOAD_ENDPOINT_REMOVE);
            NodeSnapshot live = ControlPlaneInspectionGrpc.newBlockingStub(channel)
                    .getSnapshot(GetSnapshotRequest.newBuilder().setNode("n1").build());
            n1.readUntil(live);
            assertThat(n1.deltas()).noneMatch(ToAgent::hasInSync);
        }
    }

    static Node node(String name, String... podCidrs) {
        return new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withPodCIDR(podCidrs[0])
                .withPodCIDRs(podCidrs)
                .endSpec()
                .build();
    }

    @Test
    void aNodesPodCidrsReachItsAgentFirstInTheSnapshotAndWhenTheyChange() throws Exception {
        client.nodes().resource(node("n1", "10.0.0.0/24", "fd00::/64")).create();
        client.nodes().resource(node("n2", "10.0.1.0/24")).create();
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("x")
                        .endMetadata()
                        .build())
                .create();
        client.pods()
                .inNamespace("x")
                .resource(pod("x", "a", "n1", "10.0.0.1", Map.of("app", "a")))
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

        try (TestAgent n1 = TestAgent.connect(channel, "n1", true)) {
            List<ToAgent> snapshot = new ArrayList<>();
            while (snapshot.isEmpty() || !snapshot.get(snapshot.size() - 1).hasInSync()) {
                snapshot.add(n1.next());
            }
            assertThat(snapshot)
                    .extracting(ToAgent::getPayloadCase)
                    .containsExactly(
                            PayloadCase.NODE_UPDATE, PayloadCase.WORKLOAD_ENDPOINT_UPDATE, PayloadCase.IN_SYNC);
            assertThat(snapshot.get(0).getNodeUpdate().getPodCidrsList()).containsExactly("10.0.0.0/24", "fd00::/64");

            // Another node's change sends nothing here: the next message is n1's own change.
            client.nodes()
                    .withName("n2")
                    .edit(n -> new NodeBuilder(n)
                            .editSpec()
                            .withPodCIDR("10.0.2.0/24")
                            .withPodCIDRs("10.0.2.0/24")
                            .endSpec()
                            .build());
            // Still holding x/a's address (outside the node's ranges it would be refused, and its endpoint removed).
            client.nodes()
                    .withName("n1")
                    .edit(n -> new NodeBuilder(n)
                            .editSpec()
                            .withPodCIDR("10.0.0.0/16")
                            .withPodCIDRs("10.0.0.0/16")
                            .endSpec()
                            .build());
            ToAgent changed = n1.nextDelta();
            assertThat(changed.getNodeUpdate().getPodCidrsList()).containsExactly("10.0.0.0/16");

            client.nodes().withName("n1").delete();
            ToAgent removed = n1.nextDelta();
            assertThat(removed.getPayloadCase()).isEqualTo(PayloadCase.NODE_UPDATE);
            assertThat(removed.getNodeUpdate().getPodCidrsList()).isEmpty();
            assertThat(n1.state("n1").getEndpointsList())
                    .extracting(e -> e.getId().getPod())
                    .containsExactly("a");
        }
    }
}
