// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.AdminPolicyKind;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.fixtures.AdminPolicyCrds;
import io.kubeverdict.controlplane.fixtures.HouseWorld;
import io.kubeverdict.controlplane.mockapi.MockKubernetes;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.TestAgent;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ExplainRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.testing.tier.MockApiTest;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin tiers end to end through the service with the engine's calculation, against fabric8's
 * mock API server (CRUD): CRDs installed after the control plane started, admin-tier objects
 * added, changed and removed, Node changes moving a node-address set, the CRD removed again —
 * each reaching a connected agent as the contract's deltas, and live explain naming the Pass.
 */
@MockKubernetes
@MockApiTest
class AdminTiersMockClusterTest {
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

    private void create(GenericKubernetesResource p) {
        AdminPolicyKind kind = AdminPolicyKind.of(p.getApiVersion(), p.getKind());
        client.genericKubernetesResources(kind.apiVersion(), kind.kind())
                .resource(p)
                .createOr(r -> r.update());
    }

    private static NodeSnapshot readUntil(TestAgent agent, String node, Predicate<NodeSnapshot> condition)
            throws InterruptedException {
        while (!condition.test(agent.state(node))) {
            agent.next();
        }
        return agent.state(node);
    }

    private static TierInfo tier(NodeSnapshot s, String pod, String tier) {
        return s.getEndpointsList().stream()
                .filter(e -> e.getId().getPod().equals(pod))
                .findFirst()
                .orElseThrow()
                .getEndpoint()
                .getTiersList()
                .stream()
                .filter(t -> t.getName().equals(tier))
                .findFirst()
                .orElse(null);
    }

    private Explanation explain(String from, String to, int port) {
        return ControlPlaneInspectionGrpc.newBlockingStub(channel)
                .explain(ExplainRequest.newBuilder()
                        .setFrom(from)
                        .setTo(to)
                        .setTuple(Tuple.newBuilder()
                                .setProtocol(Protocol.TCP_VALUE)
                                .setDstPort(port))
                        .build());
    }

    @Test
    void crdsInstalledLateObjectsAndNodesChangingReachTheAgent() throws Exception {
        for (String ns : new String[] {"ravenclaw", "slytherin"}) {
            client.namespaces()
                    .resource(new NamespaceBuilder()
                            .withNewMetadata()
                            .withName(ns)
                            .addToLabels("house", ns)
                            .endMetadata()
                            .build())
                    .create();
        }
        HouseWorld.pods().stream()
                .filter(p -> p.getMetadata().getNamespace().equals("ravenclaw")
                        || p.getMetadata().getNamespace().equals("slytherin"))
                .forEach(p -> client.pods()
                        .inNamespace(p.getMetadata().getNamespace())
                        .resource(p)
                        .create());
        HouseWorld.nodes().forEach(n -> client.nodes().resource(n).create());

        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Kubernetes(
                        client, Duration.ZERO, Duration.ofMillis(100), Duration.ofMillis(300)));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();

        try (TestAgent n1 = TestAgent.connect(channel, "node-1", true)) {
            n1.readUntilInSync();
            assertThat(n1.state("node-1").getPoliciesList()).isEmpty();

            // The CRDs arrive after the control plane started; then a policy passing slytherin on.
            AdminPolicyCrds.installAll(client);
            create(HouseWorld.anp("""
                    metadata: {name: ravenclaw-guard}
                    spec:
                      priority: 5
                      subject: {namespaces: {matchLabels: {house: ravenclaw}}}
                      ingress:
                      - {name: slytherin-to-np, action: Pass, from: [{namespaces: {matchLabels: {house: slytherin}}}]}
                      - {name: deny-rest, action: Deny, from: [{namespaces: {}}]}
                    """));
            NodeSnapshot s = readUntil(n1, "node-1", x -> tier(x, "luna-lovegood-0", "admin") != null);
            assertThat(tier(s, "luna-lovegood-0", "admin").getIngressPoliciesList())
                    .containsExactly("ravenclaw-guard");
            assertThat(tier(s, "draco-malfoy-0", "admin")).isNull();
            Explanation passed = explain("slytherin/draco-malfoy-1", "ravenclaw/luna-lovegood-0", 80);
            assertThat(passed.getVerdict()).isEqualTo(Verdict.VERDICT_ALLOW);
            assertThat(passed.getIngress().getReason())
                    .isEqualTo("passed by admin/ravenclaw-guard ingress[0] (slytherin-to-np)" + " → every tier passed");
            assertThat(explain("ravenclaw/luna-lovegood-1", "ravenclaw/luna-lovegood-0", 80)
                            .getVerdict())
                    .isEqualTo(Verdict.VERDICT_DENY);

            // A baseline for everyone, and a ClusterNetworkPolicy whose node peer follows the Nodes.
            create(HouseWorld.banp("""
                    metadata: {name: default}
                    spec:
                      subject: {namespaces: {}}
                      ingress: [{action: Deny, from: [{namespaces: {matchLabels: {house: slytherin}}}]}]
                    """));
            create(HouseWorld.cnp("""
                    metadata: {name: no-control-plane}
                    spec:
                      tier: Admin
                      priority: 1
                      subject: {namespaces: {matchLabels: {house: slytherin}}}
                      egress: [{action: Deny, to: [{nodes: {matchLabels: {role: control-plane}}}]}]
                    """));
            s = readUntil(
                    n1,
                    "node-1",
                    x -> tier(x, "draco-malfoy-0", "admin") != null && tier(x, "luna-lovegood-0", "baseline") != null);
            assertThat(tier(s, "draco-malfoy-0", "admin").getEgressPoliciesList())
                    .containsExactly("cnp:no-control-plane");
            assertThat(explain("slytherin/draco-malfoy-1", "ravenclaw/luna-lovegood-0", 80)
                            .getIngress()
                            .getReason())
                    .isEqualTo(
                            "passed by admin/ravenclaw-guard ingress[0] (slytherin-to-np) → denied by baseline/default ingress[0]");
            String nodeSet = s.getPoliciesList().stream()
                    .filter(p -> p.getId().getName().equals("cnp:no-control-plane"))
                    .findFirst()
                    .orElseThrow()
                    .getPolicy()
                    .getOutboundRules(0)
                    .getPeers(0)
                    .getIpSetId();
            Predicate<NodeSnapshot> members =
                    x -> x.getIpSetsList().stream().anyMatch(set -> set.getId().equals(nodeSet));
            s = readUntil(n1, "node-1", members);
            assertThat(s.getIpSetsList().stream()
                            .filter(set -> set.getId().equals(nodeSet))
                            .findFirst()
                            .orElseThrow()
                            .getMembersList())
                    .containsExactly("192.168.0.2");

            // node-1 becomes a control-plane node too: its address joins the set (a delta, nothing else).
            client.nodes()
                    .withName("node-1")
                    .edit(n -> new NodeBuilder(n)
                            .editMetadata()
                            .addToLabels("role", "control-plane")
                            .endMetadata()
                            .build());
            s = readUntil(
                    n1,
                    "node-1",
                    x -> x.getIpSetsList().stream()
                            .anyMatch(set -> set.getId().equals(nodeSet) && set.getMembersCount() == 2));

            // The ANP changes: now it denies slytherin outright; then it is deleted.
            create(HouseWorld.anp("""
                    metadata: {name: ravenclaw-guard}
                    spec:
                      priority: 5
                      subject: {namespaces: {matchLabels: {house: ravenclaw}}}
                      ingress: [{name: deny-slytherin, action: Deny, from: [{namespaces: {matchLabels: {house: slytherin}}}]}]
                    """));
            readUntil(
                    n1,
                    "node-1",
                    x -> explain("slytherin/draco-malfoy-1", "ravenclaw/luna-lovegood-0", 80)
                            .getIngress()
                            .getReason()
                            .equals("denied by admin/ravenclaw-guard ingress[0] (deny-slytherin)"));
            client.genericKubernetesResources(AdminPolicyKind.ADMIN_NETWORK_POLICY.apiVersion(), "AdminNetworkPolicy")
                    .withName("ravenclaw-guard")
                    .delete();
            // Endpoint first, then the policy (the contract's remove order).
            s = readUntil(n1, "node-1", x -> tier(x, "luna-lovegood-0", "admin") == null);
            assertThat(s.getPoliciesList()).anyMatch(p -> p.getId().getName().equals("ravenclaw-guard"));
            readUntil(
                    n1,
                    "node-1",
                    x -> x.getPoliciesList().stream()
                            .noneMatch(p -> p.getId().getName().equals("ravenclaw-guard")));

            // The ClusterNetworkPolicy CRD is removed: its policy and node set leave the agent.
            AdminPolicyCrds.uninstall(client, AdminPolicyKind.CLUSTER_NETWORK_POLICY);
            s = readUntil(
                    n1,
                    "node-1",
                    x -> x.getPoliciesList().stream()
                                    .noneMatch(p -> p.getId().getName().startsWith("cnp:"))
                            && x.getIpSetsList().stream()
                                    .noneMatch(set -> set.getId().equals(nodeSet)));
            assertThat(tier(s, "luna-lovegood-0", "baseline").getIngressPoliciesList())
                    .containsExactly("default");
            assertThat(n1.deltas()).noneMatch(m -> m.hasInSync());
        }
    }
}
