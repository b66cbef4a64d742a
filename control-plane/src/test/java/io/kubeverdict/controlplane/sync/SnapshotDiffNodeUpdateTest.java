// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.sync;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.ToAgent.PayloadCase;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The node's pod ranges travel as NodeUpdate: first in a snapshot, and whenever they change. */
class SnapshotDiffNodeUpdateTest {
    private final SnapshotDiff diff = new SnapshotDiff(1 << 20);

    private static final NodeSnapshot POLICIES = snapshot(
            "n1",
            List.of(ipSet("s1", "10.244.1.2")),
            List.of(allowIngressFrom("x/allow-a", "s1")),
            List.of(podEndpoint("x", "a", "10.244.1.1", "x/allow-a")));

    private static NodeSnapshot withRanges(NodeSnapshot s, String... cidrs) {
        return s.toBuilder().clearPodCidrs().addAllPodCidrs(List.of(cidrs)).build();
    }

    private List<ToAgent> messages(NodeSnapshot from, NodeSnapshot to) {
        return diff.diff(IndexedSnapshot.of(from, 1, 0), IndexedSnapshot.of(to, 2, 0)).stream()
                .map(Payload::message)
                .toList();
    }

    private static List<PayloadCase> kinds(List<ToAgent> msgs) {
        return msgs.stream().map(ToAgent::getPayloadCase).toList();
    }

    private static ToAgent nodeUpdate(String... cidrs) {
        return ToAgent.newBuilder()
                .setNodeUpdate(io.kubeverdict.proto.v1.NodeUpdate.newBuilder().addAllPodCidrs(List.of(cidrs)))
                .build();
    }

    @Test
    void aSnapshotStartsWithTheNodeUpdate() {
        NodeSnapshot full = withRanges(POLICIES, "10.244.1.0/24", "fd00:1::/64");
        List<ToAgent> msgs = messages(IndexedSnapshot.empty("n1").snapshot(), full);

        assertThat(kinds(msgs))
                .containsExactly(
                        PayloadCase.NODE_UPDATE,
                        PayloadCase.IP_SET_UPDATE,
                        PayloadCase.ACTIVE_POLICY_UPDATE,
                        PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
        assertThat(msgs.get(0)).isEqualTo(nodeUpdate("10.244.1.0/24", "fd00:1::/64"));
        AgentView v = new AgentView();
        msgs.forEach(v::apply);
        assertThat(v.toSnapshot("n1")).isEqualTo(AgentView.canonical(full));
    }

    @Test
    void aNodeWithoutRangesGetsNoNodeUpdate() {
        assertThat(kinds(messages(IndexedSnapshot.empty("n1").snapshot(), POLICIES)))
                .doesNotContain(PayloadCase.NODE_UPDATE);
    }

    @Test
    void aNodeWithRangesOnlyGetsTheNodeUpdateOnly() {
        NodeSnapshot bare = withRanges(IndexedSnapshot.empty("n1").snapshot(), "10.244.1.0/24");
        assertThat(messages(IndexedSnapshot.empty("n1").snapshot(), bare)).containsExactly(nodeUpdate("10.244.1.0/24"));
    }

    @Test
    void changedRangesAreSentWholeAndFirstRemovedOnesAsAnEmptyNodeUpdate() {
        NodeSnapshot before = withRanges(POLICIES, "10.244.1.0/24");
        // An endpoint change at the same time: the NodeUpdate still comes first.
        NodeSnapshot after = withRanges(
                snapshot(
                        "n1",
                        POLICIES.getIpSetsList(),
                        POLICIES.getPoliciesList(),
                        List.of(podEndpoint("x", "a", "10.244.1.1", "x/allow-a"), podEndpoint("x", "b", "10.244.1.3"))),
                "10.244.1.0/24",
                "10.244.2.0/24");

        List<ToAgent> changed = messages(before, after);
        assertThat(kinds(changed)).containsExactly(PayloadCase.NODE_UPDATE, PayloadCase.WORKLOAD_ENDPOINT_UPDATE);
        assertThat(changed.get(0)).isEqualTo(nodeUpdate("10.244.1.0/24", "10.244.2.0/24"));

        assertThat(messages(after, withRanges(after))).containsExactly(nodeUpdate());
    }

    @Test
    void equalRangesInAnotherListNeedNoMessage() {
        NodeSnapshot a = withRanges(POLICIES, "10.244.1.0/24");
        NodeSnapshot b = withRanges(
                NodeSnapshot.newBuilder(POLICIES).build(),
                new ArrayList<>(List.of("10.244.1.0/24")).toArray(String[]::new));
        assertThat(messages(a, b)).isEmpty();
    }
}
