// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.policy.SnapshotIndex;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PodGuardTest {
    // node-1 knows x/a (10.0.0.1, fd00::1), x/b (10.0.0.2), x/c (10.0.0.3)
    private final SnapshotIndex index = SnapshotIndex.compile(SnapshotFixtures.allowFromB());
    private final PodGuard guard = PodGuard.of(
            List.of("10.0.0.0/24", "fd00::/64"), Set.of(IpAddress.parse("10.0.0.254"), IpAddress.parse("192.168.1.1")));

    PodGuardTest() throws Exception {}

    private static PacketTuple tcp(String src, String dst) {
        return new PacketTuple().set(IpAddress.parse(src), IpAddress.parse(dst), 6, 80);
    }

    @Test
    void holdsAPacketFromOrToAnAddressOfTheRangesThatNoEndpointHas() {
        assertThat(guard.holds(tcp("10.0.0.9", "10.0.0.1"), index))
                .as("unknown source")
                .isTrue();
        assertThat(guard.holds(tcp("10.0.0.1", "10.0.0.9"), index))
                .as("unknown destination")
                .isTrue();
        assertThat(guard.holds(tcp("fd00::9", "fd00::1"), index)).as("IPv6").isTrue();
    }

    @Test
    void knownEndpointsTheNodesOwnAddressesAndOtherRangesAreNotHeld() {
        assertThat(guard.holds(tcp("10.0.0.2", "10.0.0.1"), index))
                .as("both known")
                .isFalse();
        assertThat(guard.holds(tcp("10.0.0.254", "10.0.0.1"), index))
                .as("the node's gateway address")
                .isFalse();
        assertThat(guard.holds(tcp("10.0.1.5", "10.0.0.1"), index))
                .as("another node's pods")
                .isFalse();
        assertThat(guard.holds(tcp("8.8.8.8", "10.0.0.3"), index))
                .as("the internet")
                .isFalse();
        assertThat(guard.nodeAddresses()).containsExactly("10.0.0.254");
        assertThat(PodGuard.NONE.holds(tcp("10.0.0.9", "10.0.0.1"), index)).isFalse();
    }

    @Test
    void exposesItsRangesByFamilyAndRefusesWhatIsNotACidr() {
        assertThat(guard.cidrs(IpAddress.V4)).containsExactly("10.0.0.0/24");
        assertThat(guard.cidrs(IpAddress.V6)).containsExactly("fd00::/64");
        assertThatThrownBy(() -> PodGuard.of(List.of("10.0.0.0/33"), Set.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(PodGuard.of(List.of(), Set.of())).isSameAs(PodGuard.NONE);
    }
}
