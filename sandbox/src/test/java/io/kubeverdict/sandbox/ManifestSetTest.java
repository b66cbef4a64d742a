// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.manifests.ManifestProblem;
import io.kubeverdict.controlplane.manifests.Origin;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.testbed.ServePort;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestSetTest {
    @TempDir
    Path source;

    @TempDir
    Path target;

    @Test
    void readsPodsAndWritesThemBackPlacedWithEverythingElseIntact() throws Exception {
        Files.writeString(source.resolve("fixture.yaml"), UpstreamFixture.manifests());
        Files.writeString(source.resolve("policy.yaml"), """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: deny-all}
                spec: {podSelector: {}}
                """);
        Files.writeString(source.resolve("notes.txt"), "not a manifest");
        ManifestSet set = ManifestSet.load(source);
        List<SandboxPod> pods = set.sandboxPods();
        assertThat(pods).hasSize(9);
        SandboxPod xa = pods.get(0);
        assertThat(xa.name()).isEqualTo("x/a");
        assertThat(xa.node()).isNull();
        assertThat(xa.ips()).isEmpty();
        assertThat(xa.ports())
                .contains(
                        new ServePort(80, Protocol.TCP),
                        new ServePort(81, Protocol.UDP),
                        new ServePort(80, Protocol.SCTP));

        Placement placement = Placement.of(set.pods(), 2, "10.244.0.0/16");
        set.writeAssigned(placement, target);
        assertThat(target.resolve("notes.txt")).doesNotExist();
        // A file without pods is copied as written.
        assertThat(Files.readString(target.resolve("policy.yaml")))
                .isEqualTo(Files.readString(source.resolve("policy.yaml")));

        List<SandboxPod> placed = ManifestSet.load(target).sandboxPods();
        assertThat(placed.get(0).node()).isEqualTo("node-1");
        // Each node's pods take addresses of its pod range: x/a, x/c, y/b, z/a, z/c on node-1.
        assertThat(placed.get(0).ips()).containsExactly("10.244.1.1");
        assertThat(placed.get(0).phase()).isEqualTo("Running");
        assertThat(placed.get(1).node()).isEqualTo("node-2");
        assertThat(placed.get(1).ips()).containsExactly("10.244.2.1");
        assertThat(placed.get(8).ips()).containsExactly("10.244.1.5");
        // The nodes have no Node objects: the copy gets them, with their pod ranges.
        assertThat(ManifestSet.load(target).nodes())
                .extracting(n -> n.getMetadata().getName(), n -> n.getSpec().getPodCIDRs())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("node-1", List.of("10.244.1.0/24")),
                        org.assertj.core.groups.Tuple.tuple("node-2", List.of("10.244.2.0/24")));
        assertThat(new ManifestLoader().load(target).nodes())
                .extracting(n -> n.getSpec().getPodCIDRs())
                .containsExactly(List.of("10.244.1.0/24"), List.of("10.244.2.0/24"));
        assertThat(Files.readString(target.resolve("fixture.yaml")))
                .contains("serve-80-tcp")
                .contains("ns: x");
        assertThat(placed)
                .extracting(SandboxPod::ports)
                .isEqualTo(pods.stream().map(SandboxPod::ports).toList());

        // Writing the same content again leaves the file alone (no event for the control plane's watcher).
        long modified =
                Files.getLastModifiedTime(target.resolve("fixture.yaml")).toMillis();
        Thread.sleep(20);
        set.writeAssigned(placement, target);
        assertThat(Files.getLastModifiedTime(target.resolve("fixture.yaml")).toMillis())
                .isEqualTo(modified);

        // A manifest removed from the source disappears from the copy.
        Files.delete(source.resolve("policy.yaml"));
        ManifestSet.load(source).writeAssigned(placement, target);
        assertThat(target.resolve("policy.yaml")).doesNotExist();
    }

    @Test
    void keepsGivenNodesAndIpsPlacesHostNetworkPodsAndSkipsPodsThatDoNotRun() throws Exception {
        Files.writeString(source.resolve("pods.yaml"), """
                apiVersion: v1
                kind: List
                items:
                - apiVersion: v1
                  kind: Pod
                  metadata: {namespace: a, name: fixed}
                  spec: {nodeName: worker-7, containers: [{name: c, ports: [{containerPort: 8080}]}]}
                  status: {phase: Running, podIPs: [{ip: 10.244.0.1}, {ip: "fd00::1"}]}
                - apiVersion: v1
                  kind: Pod
                  metadata: {namespace: a, name: free}
                  spec: {containers: [{name: c}]}
                - apiVersion: v1
                  kind: Pod
                  metadata: {namespace: a, name: host}
                  spec: {hostNetwork: true, containers: [{name: c}]}
                - apiVersion: v1
                  kind: Pod
                  metadata: {namespace: a, name: done}
                  spec: {containers: [{name: c}]}
                  status: {phase: Succeeded}
                - apiVersion: v1
                  kind: Pod
                  metadata: {namespace: a, name: starting}
                  spec: {containers: [{name: c}]}
                  status: {phase: Pending}
                """);
        ManifestSet set = ManifestSet.load(source);
        List<SandboxPod> pods = set.sandboxPods();
        assertThat(pods).hasSize(5);
        Placement placement = Placement.of(set.pods(), 3, "10.244.0.0/24");
        // A Pending pod is an endpoint (its init containers run on its address): it runs.
        assertThat(placement.nodeOf()).containsOnlyKeys("a/fixed", "a/free", "a/host", "a/starting");
        assertThat(placement.nodes()).containsExactly("node-1", "node-2", "node-3", "worker-7");
        // The hostNetwork pod runs on its node's address: no Node object, so the node's fabric address.
        assertThat(placement.hostNetwork()).containsExactly("a/host");
        assertThat(placement.ipsOf().get("a/host")).containsExactly("100.64.255.2");
        assertThat(placement.ipsOf().get("a/fixed")).containsExactly("10.244.0.1", "fd00::1");
        // 4 nodes in a /24: /27s from the second on; worker-7's would not hold a/fixed's addresses.
        assertThat(placement.podRanges().of())
                .containsOnlyKeys("node-1", "node-2", "node-3")
                .containsEntry("node-1", List.of("10.244.0.32/27"));
        assertThat(placement.podRanges().none()).containsOnlyKeys("worker-7");
        // Like `matrix --assign-ips`, a/done (Succeeded: not run) takes none.
        assertThat(placement.ipsOf().get("a/free")).containsExactly("10.244.0.33");
        assertThat(placement.ipsOf().get("a/starting")).containsExactly("10.244.0.97");
        assertThat(pods)
                .extracting(SandboxPod::name)
                .containsExactly("a/done", "a/fixed", "a/free", "a/host", "a/starting");
        assertThat(pods.get(1).ports()).containsExactly(new ServePort(8080, Protocol.TCP));
    }

    @Test
    void theCopyKeepsEveryDocumentInPlaceSoTheLoaderSeesTheSameObjectsAndProblems() throws Exception {
        Files.writeString(source.resolve("a.yaml"), """
                apiVersion: v1
                kind: Namespace
                metadata: {name: x, labels: {ns: x}}
                ---
                # a comment-only document is not counted
                ---
                apiVersion: v1
                kind: ConfigMap
                metadata: {namespace: x, name: ignored}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: a, labels: {pod: a}}
                spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
                ---
                apiVersion: apps/v1
                kind: Deployment
                metadata: {namespace: x, name: web}
                ---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: from-b}
                spec: {podSelector: {matchLabels: {pod: a}}, ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}],
                  ports: [{port: 99999}]}]}
                """);
        Files.writeString(source.resolve("b.json"), """
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "x", "name": "b", "labels": {"pod": "b"}},
                 "spec": {"containers": [{"name": "c"}]}}
                """);
        ManifestSet set = ManifestSet.load(source);
        set.writeAssigned(Placement.of(set.pods(), 2, "10.244.0.0/16"), target);

        LoadedManifests before = new ManifestLoader().load(source);
        LoadedManifests after = new ManifestLoader().load(target);
        // After the ConfigMap (document 2) and the Deployment (4), which are skipped: the policy's bad port, document
        // 5.
        assertThat(before.problems())
                .isNotEmpty()
                .allSatisfy(p -> assertThat(p.origin().document()).isEqualTo(5));
        assertThat(after.skipped()).isEqualTo(before.skipped());
        // Same file and document; lines move where a placed pod was re-serialized.
        assertThat(after.problems())
                .extracting(ManifestSetTest::fileDocumentMessage)
                .isEqualTo(before.problems().stream()
                        .map(ManifestSetTest::fileDocumentMessage)
                        .toList());
        assertThat(after.namespaces()).isEqualTo(before.namespaces());
        assertThat(after.policies()).isEqualTo(before.policies());
        // The copy adds the Node objects of the nodes it gives pod ranges, in a file of its own.
        assertThat(after.origins().entrySet().stream()
                        .filter(e -> !e.getValue().file().endsWith(ManifestSet.GENERATED_NODES))
                        .map(Map.Entry::getKey)
                        .toList())
                .containsExactlyInAnyOrderElementsOf(before.origins().keySet());
        assertThat(after.nodes()).extracting(n -> n.getMetadata().getName()).containsExactly("node-1", "node-2");
        before.origins()
                .forEach((key, o) -> assertThat(after.origins().get(key))
                        .extracting(Origin::file, Origin::document)
                        .containsExactly(o.file(), o.document()));
        assertThat(after.pods())
                .extracting(p -> p.getMetadata().getLabels())
                .containsExactly(Map.of("pod", "a"), Map.of("pod", "b"));
        assertThat(after.pods()).extracting(p -> p.getSpec().getNodeName()).containsExactly("node-1", "node-2");
        assertThat(after.pods()).extracting(p -> p.getStatus().getPodIP()).containsExactly("10.244.1.1", "10.244.2.1");
        assertThat(Files.readString(target.resolve("b.json"))).startsWith("{").contains("\"nodeName\":\"node-2\"");
    }

    @Test
    void anAddressThatIsNotAnIpLiteralIsRejectedWithItsDocumentNeverLookedUp() throws Exception {
        Files.writeString(source.resolve("pods.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: a, name: ok}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: a, name: named}
                status: {phase: Running, podIPs: [{ip: localhost}]}
                """);
        assertThatThrownBy(() -> ManifestSet.load(source))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("pods.yaml document 2")
                .hasMessageContaining("\"localhost\" is not an IP address");
    }

    private static String fileDocumentMessage(ManifestProblem p) {
        return p.origin().file() + " document " + p.origin().document() + ": " + p.message();
    }
}
