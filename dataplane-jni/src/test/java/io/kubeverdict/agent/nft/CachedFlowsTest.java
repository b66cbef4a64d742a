// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.nft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.policy.IpAddress;
import org.junit.jupiter.api.Test;

class CachedFlowsTest {
    @Test
    void readsEachElementOfTheListingWithItsCount() {
        String listing = """
                table inet kube_verdict {
                	set cache4 {
                		type ipv4_addr . ipv4_addr . inet_proto . inet_service
                		size 65536
                		flags dynamic,timeout
                		counter
                		timeout 1m
                		elements = { 10.244.0.2 . 10.244.0.3 . tcp . 80 counter packets 21 bytes 1260 expires 58s,
                			     10.244.0.2 . 10.244.0.9 . udp . 53 counter packets 1 bytes 60 expires 12s,
                			     10.244.0.2 . 10.244.0.4 . 132 . 9000 counter packets 2 bytes 120 expires 1s }
                	}
                }
                """;
        assertThat(CachedFlows.parse(listing))
                .containsExactly(
                        new CachedFlows.Flow(IpAddress.parse("10.244.0.2"), IpAddress.parse("10.244.0.3"), 6, 80, 21),
                        new CachedFlows.Flow(IpAddress.parse("10.244.0.2"), IpAddress.parse("10.244.0.9"), 17, 53, 1),
                        new CachedFlows.Flow(
                                IpAddress.parse("10.244.0.2"), IpAddress.parse("10.244.0.4"), 132, 9000, 2));
    }

    @Test
    void readsIpv6KeysAndSkipsWhatIsNotAKey() {
        String listing = "elements = { fd00::2 . fd00::1 . tcp . 443 counter packets 3 bytes 240 expires 5s,"
                + " fd00::2 . fd00::1 . gre . 0 counter packets 1 bytes 1 expires 5s,"
                + " 10.0.0.300 . 10.0.0.1 . tcp . 80 counter packets 1 bytes 1 expires 5s }";
        assertThat(CachedFlows.parse(listing))
                .containsExactly(
                        new CachedFlows.Flow(IpAddress.parse("fd00::2"), IpAddress.parse("fd00::1"), 6, 443, 3));
    }

    @Test
    void aSetWithoutCountersListsNothing() {
        assertThat(CachedFlows.parse("elements = { 10.0.0.2 . 10.0.0.1 . tcp . 80 expires 5s }"))
                .isEmpty();
    }
}
