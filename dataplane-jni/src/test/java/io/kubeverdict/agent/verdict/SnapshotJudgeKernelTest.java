// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.verdict;

import static io.kubeverdict.testing.dp.DpTestbed.CLIENT4;
import static io.kubeverdict.testing.dp.DpTestbed.CLIENT6;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER4;
import static io.kubeverdict.testing.dp.DpTestbed.SERVER6;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.nft.QueuePath;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetType;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.testing.dp.Dataplane;
import io.kubeverdict.testing.dp.DpTestbed;
import io.kubeverdict.testing.dp.Probe;
import io.kubeverdict.testing.dp.RecordingObserver;
import io.kubeverdict.testing.tier.KernelTest;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The loop with the shared verdict function as its judge, as the agent plugs it in. */
@KernelTest
class SnapshotJudgeKernelTest {
    private DpTestbed bed;

    @BeforeEach
    void createBed() throws Exception {
        bed = DpTestbed.create();
        bed.serve(bed.server, 80, 81);
    }

    @AfterEach
    void removeBed() throws Exception {
        bed.close();
    }

    /** x/server admits TCP and UDP 80 from the pods of IP set "clients" (x/client); x/client is not isolated. */
    private static NodeSnapshot webPolicy() {
        Rule rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .setRuleId("ingress[0]")
                .addPeers(Peer.newBuilder().setIpSetId("clients"))
                .addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(80))
                .addPorts(PortMatch.newBuilder().setProtocol(Protocol.UDP).setPort(80))
                .build();
        return NodeSnapshot.newBuilder()
                .setNode("node")
                .addIpSets(IpSet.newBuilder()
                        .setId("clients")
                        .setType(IpSetType.IP)
                        .addMembers(CLIENT4)
                        .addMembers(CLIENT6))
                .addPolicies(ActivePolicy.newBuilder()
                        .setId(PolicyId.newBuilder().setTier("default").setName("x/web"))
                        .setPolicy(Policy.newBuilder().addInboundRules(rule)))
                .addEndpoints(endpoint("server", List.of(SERVER4, SERVER6), List.of("x/web")))
                .addEndpoints(endpoint("client", List.of(CLIENT4, CLIENT6), List.of()))
                .build();
    }

    private static Endpoint endpoint(String pod, List<String> ips, List<String> ingressPolicies) {
        WorkloadEndpoint.Builder w = WorkloadEndpoint.newBuilder().addAllIps(ips);
        if (!ingressPolicies.isEmpty()) {
            w.addTiers(TierInfo.newBuilder()
                    .setName("default")
                    .setDefaultAction(Action.DENY)
                    .addAllIngressPolicies(ingressPolicies));
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                .setEndpoint(w)
                .build();
    }

    @Test
    void enforcesASnapshotAndASwappedOne() throws Exception {
        SnapshotIndex index = SnapshotIndex.compile(webPolicy());
        RecordingObserver observer = new RecordingObserver();
        try (Dataplane dp =
                bed.own(Dataplane.table(bed.node, QueuePath.XT_NFQUEUE, 400, false, List.of(SERVER4, SERVER6)))) {
            dp.listen(index::decide, observer, false);
            assertThat(Probe.tcp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isFalse();
            assertThat(Probe.udp(bed.client, SERVER4, 80)).isTrue();
            assertThat(Probe.udp(bed.client, SERVER6, 81)).isFalse();
            assertThat(Probe.tcp(bed.client, SERVER6, 80)).isTrue();
            assertThat(Probe.tcp(bed.node, SERVER4, 81))
                    .as("the node's own probe")
                    .isTrue();

            // the policy goes away: a new snapshot without it
            SnapshotIndex open = SnapshotIndex.compile(webPolicy().toBuilder()
                    .clearPolicies()
                    .setEndpoints(0, endpoint("server", List.of(SERVER4, SERVER6), List.of()))
                    .build());
            dp.loop().judge(open::decide);
            assertThat(Probe.tcp(bed.client, SERVER4, 81)).isTrue();
            assertThat(observer.failures).hasValue(0);
        }
    }
}
