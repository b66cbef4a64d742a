// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.TierInfo;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import org.junit.jupiter.api.Test;

class SelectedAddressesTest {

    private static Endpoint endpoint(String pod, TierInfo tier, String... ips) {
        WorkloadEndpoint.Builder ep = WorkloadEndpoint.newBuilder().addAllIps(java.util.List.of(ips));
        if (tier != null) {
            ep.addTiers(tier);
        }
        return Endpoint.newBuilder()
                .setId(EndpointId.newBuilder().setNamespace("x").setPod(pod))
                .setEndpoint(ep)
                .build();
    }

    @Test
    void anEndpointOnlyStagedPoliciesSelectIsQueuedTooButAnEmptyWouldBeListIsNot() {
        Endpoint open = endpoint("open", null, "10.0.0.5");
        Endpoint staged = open.toBuilder()
                .setEndpoint(open.getEndpoint().toBuilder()
                        .addStagedTiers(
                                TierInfo.newBuilder().setName("default").addIngressPolicies("staged:x/deny-all")))
                .build();
        Endpoint nothingListed = endpoint("other", null, "10.0.0.6").toBuilder()
                .setEndpoint(open.getEndpoint().toBuilder()
                        .clearIps()
                        .addIps("10.0.0.6")
                        .addStagedTiers(TierInfo.newBuilder().setName("default")))
                .build();
        SelectedAddresses selected = SelectedAddresses.of(NodeSnapshot.newBuilder()
                .addEndpoints(staged)
                .addEndpoints(nothingListed)
                .build());
        assertThat(selected.ipv4()).containsExactly("10.0.0.5");
        assertThat(SelectedAddresses.isSelected(staged))
                .as("live selection is unchanged")
                .isFalse();
    }

    @Test
    void endpointsWithAPolicyInEitherDirectionAreSelectedWithAllTheirAddresses() {
        NodeSnapshot snapshot = NodeSnapshot.newBuilder()
                .addEndpoints(endpoint(
                        "ingress",
                        TierInfo.newBuilder()
                                .setName("default")
                                .addIngressPolicies("x/p")
                                .build(),
                        "10.0.0.1",
                        "fd00::1"))
                .addEndpoints(endpoint(
                        "egress",
                        TierInfo.newBuilder()
                                .setName("default")
                                .addEgressPolicies("x/q")
                                .build(),
                        "10.0.0.2"))
                .addEndpoints(endpoint(
                        "empty-tier", TierInfo.newBuilder().setName("admin").build(), "10.0.0.3"))
                .addEndpoints(endpoint("no-tier", null, "10.0.0.4", "fd00::4"))
                .build();

        SelectedAddresses selected = SelectedAddresses.of(snapshot);

        assertThat(selected.ipv4()).containsExactly("10.0.0.1", "10.0.0.2");
        assertThat(selected.ipv6()).containsExactly("fd00::1");
        assertThat(selected.size()).isEqualTo(3);
    }

    @Test
    void equalContentIsEqualWhateverTheOrder() {
        SelectedAddresses a = new SelectedAddresses(java.util.Set.of("10.0.0.2", "10.0.0.1"), java.util.Set.of());
        SelectedAddresses b = new SelectedAddresses(
                new java.util.LinkedHashSet<>(java.util.List.of("10.0.0.1", "10.0.0.2")), java.util.Set.of());
        assertThat(a).isEqualTo(b);
        assertThat(SelectedAddresses.of(NodeSnapshot.getDefaultInstance())).isEqualTo(SelectedAddresses.NONE);
    }
}
