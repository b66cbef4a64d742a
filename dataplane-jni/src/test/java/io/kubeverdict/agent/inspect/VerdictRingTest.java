// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.inspect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VerdictRingTest {

    private static PacketTuple packet(int n) {
        PacketTuple p = new PacketTuple();
        p.family = 4;
        p.srcLo = 0x0A000000L + n;
        p.dstLo = 0x0A000100L + n;
        p.protocol = Protocol.TCP_VALUE;
        p.dstPort = 1000 + n;
        p.srcPort = 40000 + n;
        return p;
    }

    @Test
    void deliversInOrderAndDropsTheNewestWhenFull() {
        VerdictRing ring = new VerdictRing(4);
        for (int i = 0; i < 6; i++) {
            boolean taken = ring.offer(packet(i), i);
            assertThat(taken).isEqualTo(i < 4);
        }
        assertThat(ring.dropped()).isEqualTo(2);

        List<String> out = new ArrayList<>();
        int n = ring.drain(
                (p, code, cached, staged) ->
                        out.add(p.source() + ":" + p.srcPort + ">" + p.destination() + ":" + p.dstPort + "/" + code),
                10);
        assertThat(n).isEqualTo(4);
        assertThat(out)
                .containsExactly(
                        "10.0.0.0:40000>10.0.1.0:1000/0",
                        "10.0.0.1:40001>10.0.1.1:1001/1",
                        "10.0.0.2:40002>10.0.1.2:1002/2",
                        "10.0.0.3:40003>10.0.1.3:1003/3");

        assertThat(ring.offer(packet(9), 9)).as("room again after drain").isTrue();
        assertThat(ring.drain((p, code, cached, staged) -> out.add("" + code), 10))
                .isEqualTo(1);
    }

    @Test
    void oneProducerOneConsumerLoseNothingWhileThereIsRoom() throws Exception {
        VerdictRing ring = new VerdictRing(1024);
        int total = 200_000;
        long[] sum = new long[1];
        int[] seen = new int[1];
        Thread consumer = new Thread(() -> {
            while (seen[0] + ring.dropped() < total) {
                ring.drain(
                        (p, code, cached, staged) -> {
                            sum[0] += code;
                            seen[0]++;
                        },
                        256);
            }
        });
        consumer.start();
        PacketTuple p = packet(1);
        long offered = 0;
        for (int i = 0; i < total; i++) {
            if (ring.offer(p, i)) {
                offered += i;
            }
        }
        consumer.join(10_000);
        assertThat(seen[0] + ring.dropped()).isEqualTo(total);
        assertThat(sum[0]).isEqualTo(offered);
    }

    @Test
    void capacityMustBeAPowerOfTwo() {
        assertThatThrownBy(() -> new VerdictRing(3)).isInstanceOf(IllegalArgumentException.class);
    }
}
