// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.source;

import static io.kubeverdict.controlplane.source.RecordingSink.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Nodes and admin-tier policies in a watched manifest directory: added, changed, removed. */
class AdminManifestSourceTest {
    static final String NODE = """
            apiVersion: v1
            kind: Node
            metadata: {name: n1, labels: {role: %s}}
            status: {addresses: [{type: InternalIP, address: 10.9.0.1}]}
            """;

    static final String ANP = """
            apiVersion: policy.networking.k8s.io/v1alpha1
            kind: AdminNetworkPolicy
            metadata: {name: guard}
            spec: {priority: %d, subject: {namespaces: {}}, ingress: [{action: Deny, from: [{namespaces: {}}]}]}
            """;

    static final String CNP = """
            apiVersion: policy.networking.k8s.io/v1alpha2
            kind: ClusterNetworkPolicy
            metadata: {name: v2}
            spec: {tier: Admin, priority: 3, subject: {namespaces: {}}, egress: [{action: Pass, to: [{nodes: {}}]}]}
            """;

    @Test
    void nodesAndAdminPoliciesFlowAsChanges(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), NODE.formatted("worker") + "---\n" + ANP.formatted(1) + "---\n" + CNP);
        RecordingSink sink = new RecordingSink();
        try (ManifestDirectorySource src = new ManifestDirectorySource(
                dir, new EngineDirectoryReader(), sink, ManifestDirectorySourceTest.QUICK, new RecordingListener())) {
            src.start();
            assertThat(sink.log()).containsExactlyInAnyOrder("node+n1", "anp+guard", "cnp+v2");
            assertThat(sink.kinds).contains("node/upsert", "adminnetworkpolicy/upsert", "clusternetworkpolicy/upsert");

            // The ANP's priority and the node's labels change; the CNP is unchanged and stays quiet.
            Files.writeString(
                    dir.resolve("a.yaml"),
                    NODE.formatted("control-plane") + "---\n" + ANP.formatted(2) + "---\n" + CNP);
            await(() -> sink.log().size() >= 5, "two changes");
            assertThat(sink.log().subList(3, sink.log().size())).containsExactlyInAnyOrder("node+n1", "anp+guard");

            Files.writeString(dir.resolve("a.yaml"), CNP);
            await(() -> sink.log().size() >= 7, "two deletes");
            assertThat(sink.log().subList(5, sink.log().size())).containsExactlyInAnyOrder("node-n1", "anp-guard");
            assertThat(sink.kinds).contains("node/delete", "adminnetworkpolicy/delete");
        }
    }
}
