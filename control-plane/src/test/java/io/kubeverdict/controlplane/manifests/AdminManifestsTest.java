// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Nodes and the admin-tier kinds in a manifest directory. */
class AdminManifestsTest {
    private static final Path DIR = Path.of("src/test/resources/manifests/admin");

    @Test
    void loadsNodesAndAdminTierPoliciesOfBothVersions() throws Exception {
        LoadedManifests m = new ManifestLoader().load(DIR);
        assertThat(m.nodes()).extracting(n -> n.getMetadata().getName()).containsExactly("n1");
        assertThat(m.adminPolicies())
                .extracting(p -> p.getKind() + " " + p.getMetadata().getName())
                .containsExactly(
                        "AdminNetworkPolicy guard", "BaselineAdminNetworkPolicy default", "ClusterNetworkPolicy v2");
        assertThat(m.origins().get("Node n1")).isEqualTo(new Origin("01-cluster.yaml", 2, 5, 1));
        assertThat(m.origins().get("AdminNetworkPolicy guard")).isEqualTo(new Origin("02-admin.yaml", 1, 1, 1));
    }

    @Test
    void reportsTheReadersProblemsWithFileLineAndDocument() throws Exception {
        List<String> problems = new ManifestLoader()
                .load(DIR).problems().stream().map(Object::toString).toList();
        assertThat(problems)
                .containsExactly(
                        "02-admin.yaml:1:1 (document 1): AdminNetworkPolicy guard: spec.priority: priority 2000 outside 0-1000; evaluated at 1000");
    }

    @Test
    void anInvalidPodCidrOfANodeIsAWarningAndLeftOut() throws Exception {
        LoadedManifests m = new ManifestLoader().loadText("nodes.yaml", """
                apiVersion: v1
                kind: Node
                metadata: {name: n1}
                spec: {podCIDRs: [10.244.1.0/24, 10.244.300.0/24]}
                """);
        assertThat(m.problems())
                .extracting(Object::toString)
                .containsExactly(
                        "nodes.yaml:1:1 (document 1): Node n1: spec.podCIDRs[1]: invalid CIDR \"10.244.300.0/24\"; ignored");
        assertThat(m.nodes()).hasSize(1);
    }

    @Test
    void aVersionTheEngineDoesNotReadRejectsTheLoad() {
        // It used to be a warning and ignored: a policy left out allows what it would deny.
        assertThatThrownBy(() -> new ManifestLoader().loadText("cnp.yaml", """
                apiVersion: policy.networking.k8s.io/v1beta1
                kind: ClusterNetworkPolicy
                metadata: {name: future}
                spec: {}
                """))
                .isInstanceOf(ManifestLoadException.class)
                .hasMessage("cnp.yaml:1:1 (document 1): ClusterNetworkPolicy"
                        + " of apiVersion policy.networking.k8s.io/v1beta1 is not read: kube-verdict reads ClusterNetworkPolicy"
                        + " of policy.networking.k8s.io/v1alpha2 only");
    }

    @Test
    void theOfflineClusterEnforcesThem() throws Exception {
        LoadedManifests m = new ManifestLoader().load(DIR);
        OfflineCluster c = new OfflineCluster(
                new ClusterObjects(m.namespaces(), m.pods(), m.policies(), m.adminPolicies(), m.nodes()));
        assertThat(c.allowed("10.1.0.1", "10.9.0.1", 6, 443)).isFalse(); // nodes peer: n1's address
        assertThat(c.explain("10.1.0.1", "10.9.0.1", 6, 443).getEgress().getReason())
                .isEqualTo("denied by admin/guard egress[0]");
        // An outside address is no pod peer: neither baseline rule matches, the baseline's default allows.
        assertThat(c.allowed("10.2.0.9", "10.1.0.1", 6, 80)).isTrue();
        assertThat(c.explain("10.2.0.9", "10.1.0.1", 6, 80).getIngress().getReason())
                .isEqualTo("no rule matched: allowed by the default of tier baseline");
    }
}
