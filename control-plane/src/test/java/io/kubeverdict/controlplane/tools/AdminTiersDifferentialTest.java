// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.kubeverdict.controlplane.fixtures.RandomAdminCluster;
import io.kubeverdict.proto.v1.Protocol;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The calculation + SnapshotIndex (enforcement path) against {@link AdminReferenceEvaluator} on
 * random clusters with all three tiers and both API versions ({@link RandomAdminCluster}): every
 * ordered pair of addresses — pods of both families, node addresses (where the hostNetwork pods
 * are) and outside addresses — on TCP/UDP/SCTP ports 53, 80, 81, 100 and ICMP. Seeds are fixed so
 * a failure reproduces; -Dkv.diff.seed=N -Dkv.diff.clusters=M explores others.
 */
class AdminTiersDifferentialTest {
    private static final String[] OUTSIDE = {"10.1.0.3", "8.8.8.8", "fd00::3"};

    @Test
    void calculatorAndSnapshotIndexAgreeWithTheReference() {
        long seed0 = Long.getLong("kv.diff.seed", 20261201L);
        int clusters = Integer.getInteger("kv.diff.clusters", 1500);
        long checks = 0;
        long denied = 0;
        int withAdmin = 0;
        for (int i = 0; i < clusters; i++) {
            long seed = seed0 + i;
            RandomAdminCluster c = new RandomAdminCluster(seed);
            withAdmin += c.adminPolicies.isEmpty() ? 0 : 1;
            OfflineCluster cluster =
                    new OfflineCluster(new ClusterObjects(c.namespaces, c.pods, c.policies, c.adminPolicies, c.nodes));
            AdminReferenceEvaluator ref =
                    new AdminReferenceEvaluator(c.namespaces, c.pods, c.policies, c.adminPolicies, c.nodes);
            Set<String> addresses = new LinkedHashSet<>(List.of(OUTSIDE));
            for (int n = 0; n < 3; n++) {
                addresses.add(RandomAdminCluster.nodeV4(n));
                addresses.add(RandomAdminCluster.nodeV6(n));
            }
            for (Pod p : c.pods) {
                if (ReferenceEvaluator.isEndpoint(p)) {
                    for (PodIP ip : p.getStatus().getPodIPs()) {
                        addresses.add(ip.getIp());
                    }
                }
            }
            for (String s : addresses) {
                for (String d : addresses) {
                    if (s.contains(":") != d.contains(":") || s.equals(d)) {
                        continue;
                    }
                    for (String proto : new String[] {"TCP", "UDP", "SCTP", "ICMP"}) {
                        int number = proto.equals("ICMP")
                                ? (s.contains(":") ? Protocol.ICMPV6_VALUE : Protocol.ICMP_VALUE)
                                : Protocol.valueOf(proto).getNumber();
                        for (int port : proto.equals("ICMP") ? new int[] {0} : new int[] {53, 80, 81, 100}) {
                            boolean expected = ref.allowed(s, d, proto, port);
                            boolean actual = cluster.allowed(s, d, number, port);
                            if (actual != expected) {
                                throw new AssertionError(
                                        "seed " + seed + ": " + s + " -> " + d + " " + proto + "/" + port
                                                + " expected " + expected + " got " + actual + "\n"
                                                + cluster.explain(s, d, number, port) + describe(c, cluster));
                            }
                            checks++;
                            denied += expected ? 0 : 1;
                        }
                    }
                }
            }
        }
        // The generator must exercise both outcomes, and admin policies in most clusters.
        assertThat(checks).isGreaterThan(200_000);
        assertThat(denied).isBetween(checks / 20, checks - checks / 20);
        assertThat(withAdmin).isGreaterThan(clusters / 2);
    }

    private static String describe(RandomAdminCluster c, OfflineCluster cluster) {
        var yaml = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
        StringBuilder sb = new StringBuilder();
        List<Object> all = new ArrayList<>();
        all.addAll(c.namespaces);
        all.addAll(c.nodes);
        all.addAll(c.pods);
        all.addAll(c.policies);
        all.addAll(c.adminPolicies);
        all.forEach(o -> sb.append(yaml.asYaml(o)));
        cluster.snapshots().values().forEach(s -> sb.append(s));
        return sb.toString();
    }
}
