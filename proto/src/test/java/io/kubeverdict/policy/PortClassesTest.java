// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.Protocol;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PortClassesTest {

    private static final int[] WITH_PORTS = {Protocol.TCP_VALUE, Protocol.UDP_VALUE, Protocol.SCTP_VALUE};

    @Test
    void aClassMaskIsTheMapsAnswerForEveryPortOfTheClass() {
        Random random = new Random(5);
        for (int round = 0; round < 100; round++) {
            int n = random.nextInt(12);
            int[] protocol = new int[n];
            int[] lo = new int[n];
            int[] hi = new int[n];
            int[] named = new int[n];
            MaskMap.Builder[] maps = {new MaskMap.Builder(), new MaskMap.Builder(), new MaskMap.Builder()};
            for (int q = 0; q < n; q++) {
                int p = random.nextInt(3);
                protocol[q] = WITH_PORTS[p];
                lo[q] = random.nextInt(4) == 0 ? 0 : random.nextInt(65536);
                hi[q] = random.nextInt(4) == 0 ? 65535 : Math.min(65535, lo[q] + random.nextInt(3000));
                named[q] = random.nextInt(6) == 0 ? 1 : SnapshotCompiler.NOT_NAMED; // named: never numbered
                if (named[q] == SnapshotCompiler.NOT_NAMED && random.nextBoolean()) { // this program's clause
                    maps[p].add(0, lo[q], 0, hi[q], 1L << q);
                }
            }
            PortClasses classes = PortClasses.of(protocol, lo, hi, named);
            MaskMap tcp = maps[0].build();
            MaskMap udp = maps[1].build();
            MaskMap sctp = maps[2].build();
            long[] masks = classes.masksOf(tcp, udp, sctp);
            MaskMap[] byProtocol = {tcp, udp, sctp};
            for (int probe = 0; probe < 400; probe++) {
                int p = random.nextInt(3);
                int port = probe % 4 == 0 ? (probe % 8 == 0 ? 0 : 65535) : random.nextInt(65536);
                int c = classes.classOf(WITH_PORTS[p], port);
                assertThat(masks[c])
                        .as("round %d %s port %d (class %d)", round, WITH_PORTS[p], port, c)
                        .isEqualTo(byProtocol[p].get(0, port));
            }
        }
    }

    @Test
    void protocolsWithoutPortsAndPortsOutOfRange() {
        PortClasses classes = PortClasses.of(
                new int[] {Protocol.TCP_VALUE}, new int[] {80}, new int[] {80}, new int[] {SnapshotCompiler.NOT_NAMED});

        assertThat(classes.classOf(Protocol.ICMP_VALUE, 80)).isEqualTo(PortClasses.NO_PORTS);
        assertThat(classes.classOf(Protocol.UDP_VALUE, 80))
                .as("no clause names UDP")
                .isZero();
        assertThat(classes.classOf(Protocol.TCP_VALUE, 80)).isNotEqualTo(classes.classOf(Protocol.TCP_VALUE, 81));
        assertThat(classes.classOf(Protocol.TCP_VALUE, 1 << 16)).isZero();
    }

    @Test
    void tooManyClassesNumberNothing() {
        int n = PortClasses.MAX_CLASSES;
        int[] protocol = new int[n];
        int[] port = new int[n];
        int[] named = new int[n];
        for (int q = 0; q < n; q++) {
            protocol[q] = Protocol.TCP_VALUE;
            port[q] = 2 * q + 1;
            named[q] = SnapshotCompiler.NOT_NAMED;
        }
        PortClasses classes = PortClasses.of(protocol, port, port, named);

        assertThat(classes.masksOf(MaskMap.EMPTY, MaskMap.EMPTY, MaskMap.EMPTY)).isNull();
        assertThat(classes.classOf(Protocol.TCP_VALUE, 1)).isZero();
    }
}
