// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static io.kubeverdict.policy.Snapshots.allowIngressFrom;
import static io.kubeverdict.policy.Snapshots.ipSet;
import static io.kubeverdict.policy.Snapshots.podEndpoint;
import static io.kubeverdict.policy.Snapshots.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class SnapshotDigestTest {
    private static final NodeSnapshot S = snapshot(
                    "n1",
                    List.of(ipSet("s1", "10.0.0.1", "10.0.0.2", "10.0.0.3"), ipSet("s2", "10.0.1.1")),
                    List.of(allowIngressFrom("x/a", "s1"), allowIngressFrom("x/b", "s2")),
                    List.of(
                            podEndpoint("x", "a", "10.0.0.1", "x/a"),
                            podEndpoint("x", "b", "10.0.0.2", "x/b"),
                            podEndpoint("y", "c", "10.0.0.3")))
            .toBuilder()
            .addPodCidrs("10.0.0.0/24")
            .addPodCidrs("fd00::/64")
            .build();

    @Test
    void orderDoesNotCount() {
        Random random = new Random(34);
        for (int i = 0; i < 20; i++) {
            NodeSnapshot shuffled = shuffle(S, random);
            assertThat(SnapshotDigest.of(shuffled)).isEqualTo(SnapshotDigest.of(S));
            assertThat(SnapshotDigest.matches(shuffled, SnapshotDigest.of(S))).isTrue();
        }
        assertThat(SnapshotDigest.of(S).size()).isEqualTo(32);
    }

    @Test
    void everyChangeOfContentChangesTheDigest() {
        List<UnaryOperator<NodeSnapshot>> changes = List.of(
                s -> s.toBuilder().setNode("n2").build(),
                s -> s.toBuilder().setPodCidrs(0, "10.0.1.0/24").build(),
                s -> s.toBuilder().clearPodCidrs().build(),
                s -> s.toBuilder()
                        .setIpSets(0, s.getIpSets(0).toBuilder().addMembers("10.0.0.4"))
                        .build(),
                s -> s.toBuilder()
                        .setIpSets(0, s.getIpSets(0).toBuilder().setMembers(0, "10.0.0.9"))
                        .build(),
                s -> s.toBuilder()
                        .setIpSets(1, s.getIpSets(1).toBuilder().setId("s3"))
                        .build(),
                s -> s.toBuilder().removeIpSets(1).build(),
                s -> s.toBuilder().setPolicies(1, allowIngressFrom("x/b", "s1")).build(),
                s -> s.toBuilder().removePolicies(0).build(),
                s -> s.toBuilder()
                        .setEndpoints(2, podEndpoint("y", "c", "10.0.0.4"))
                        .build(),
                s -> s.toBuilder()
                        .addEndpoints(podEndpoint("y", "d", "10.0.0.5"))
                        .build(),
                // A member moved from one set to the other: the same strings, another state.
                s -> s.toBuilder()
                        .setIpSets(0, ipSet("s1", "10.0.0.1", "10.0.0.2"))
                        .setIpSets(1, ipSet("s2", "10.0.0.3", "10.0.1.1"))
                        .build());
        ByteString original = SnapshotDigest.of(S);
        for (UnaryOperator<NodeSnapshot> change : changes) {
            NodeSnapshot changed = change.apply(S);
            assertThat(changed).isNotEqualTo(S);
            assertThat(SnapshotDigest.of(changed)).as(changed.toString()).isNotEqualTo(original);
            assertThat(SnapshotDigest.matches(changed, original)).isFalse();
        }
    }

    @Test
    void anEmptyDigestMatchesNothing() {
        assertThat(SnapshotDigest.matches(NodeSnapshot.getDefaultInstance(), ByteString.EMPTY))
                .isFalse();
        assertThat(SnapshotDigest.matches(S, ByteString.copyFrom(new byte[32]))).isFalse();
    }

    private static NodeSnapshot shuffle(NodeSnapshot s, Random random) {
        List<IpSet> sets = new ArrayList<>();
        for (IpSet set : s.getIpSetsList()) {
            List<String> members = new ArrayList<>(set.getMembersList());
            Collections.shuffle(members, random);
            sets.add(set.toBuilder().clearMembers().addAllMembers(members).build());
        }
        Collections.shuffle(sets, random);
        var policies = new ArrayList<>(s.getPoliciesList());
        Collections.shuffle(policies, random);
        var endpoints = new ArrayList<>(s.getEndpointsList());
        Collections.shuffle(endpoints, random);
        var cidrs = new ArrayList<>(s.getPodCidrsList());
        Collections.shuffle(cidrs, random);
        return s.toBuilder()
                .clearIpSets()
                .addAllIpSets(sets)
                .clearPolicies()
                .addAllPolicies(policies)
                .clearEndpoints()
                .addAllEndpoints(endpoints)
                .clearPodCidrs()
                .addAllPodCidrs(cidrs)
                .build();
    }
}
