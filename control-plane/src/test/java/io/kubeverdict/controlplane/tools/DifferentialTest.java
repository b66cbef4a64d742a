// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.kubeverdict.controlplane.fixtures.RandomCluster;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The calculation + SnapshotIndex (enforcement path) against {@link ReferenceEvaluator} on
 * thousands of random small clusters: every ordered pair of addresses (pods of both families and
 * a few outside addresses), TCP/UDP/SCTP on ports 53, 80, 81, 100 and ICMP. Seeds are fixed so a
 * failure reproduces; -Dkv.diff.seed=N -Dkv.diff.clusters=M explores others.
 */
class DifferentialTest {
    private static final String[] OUTSIDE = {"192.168.3.4", "10.1.0.3", "fd00::3", "8.8.8.8"};

    @Test
    void calculatorAndSnapshotIndexAgreeWithTheReference() {
        long seed0 = Long.getLong("kv.diff.seed", 20261130L);
        int clusters = Integer.getInteger("kv.diff.clusters", 2000);
        long checks = 0;
        for (int i = 0; i < clusters; i++) {
            long seed = seed0 + i;
            RandomCluster c = new RandomCluster(seed);
            OfflineCluster cluster = new OfflineCluster(c.namespaces, c.pods, c.policies);
            ReferenceEvaluator ref = new ReferenceEvaluator(c.namespaces, c.pods, c.policies);
            List<String> addresses = new ArrayList<>(List.of(OUTSIDE));
            for (Pod p : c.pods) {
                if (ReferenceEvaluator.isEndpoint(p)) {
                    for (PodIP ip : p.getStatus().getPodIPs()) {
                        addresses.add(ip.getIp());
                    }
                }
            }
            assertThat(cluster.endpoints()).as("endpoints, seed %d", seed).hasSize((int)
                    c.pods.stream().filter(ReferenceEvaluator::isEndpoint).count());
            for (String s : addresses) {
                for (String d : addresses) {
                    if (s.contains(":") != d.contains(":") || s.equals(d)) {
                        continue;
                    }
                    for (String proto : new String[] {"TCP", "UDP", "SCTP"}) {
                        int protoNumber = Protocol.valueOf(proto).getNumber();
                        for (int port : new int[] {53, 80, 81, 100}) {
                            boolean expected = ref.allowed(s, d, proto, port);
                            boolean actual = cluster.allowed(s, d, protoNumber, port);
                            if (actual != expected) {
                                throw new AssertionError(
                                        "seed " + seed + ": " + s + " -> " + d + " " + proto + "/" + port + " expected "
                                                + expected + " got " + actual + "\n" + describe(c, cluster));
                            }
                            checks++;
                        }
                    }
                    boolean icmpExpected = ref.allowed(s, d, "ICMP", 0);
                    if (cluster.allowed(s, d, s.contains(":") ? Protocol.ICMPV6_VALUE : Protocol.ICMP_VALUE, 0)
                            != icmpExpected) {
                        throw new AssertionError("seed " + seed + ": " + s + " -> " + d + " ICMP expected "
                                + icmpExpected + "\n" + describe(c, cluster));
                    }
                }
            }
        }
        assertThat(checks).isGreaterThan(100_000);
    }

    private static String describe(RandomCluster c, OfflineCluster cluster) {
        var yaml = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
        StringBuilder sb = new StringBuilder();
        c.namespaces.forEach(n -> sb.append(yaml.asYaml(n)));
        c.pods.forEach(p -> sb.append(yaml.asYaml(p)));
        c.policies.forEach(p -> sb.append(yaml.asYaml(p)));
        cluster.snapshots().values().forEach(s -> sb.append(s));
        return sb.toString();
    }
}
