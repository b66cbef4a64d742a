package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ManifestLoaderTest {
    private static final Path MIXED = Path.of("src/test/resources/manifests/mixed");

    @Test
    void loadsKindsFromSeveralDocumentsFilesAndLists() throws Exception {
        LoadedManifests m = new ManifestLoader().load(MIXED);
        assertThat(m.namespaces()).extracting(n -> n.getMetadata().getName()).containsExactly("shop");
        assertThat(m.pods()).extracting(p -> p.getMetadata().getName()).containsExactly("back", "front");
        assertThat(m.policies()).extracting(p -> p.getMetadata().getName()).containsExactly("back-from-front", "front-broken");
        // The List in sub/03-list.json redefines shop/front: later wins, reported.
        assertThat(m.pods().get(1).getMetadata().getLabels()).containsEntry("v", "2");
        assertThat(m.origins().get("Pod shop/front")).isEqualTo(new Origin("sub/03-list.json", 1));
        assertThat(m.origins().get("Pod shop/back")).isEqualTo(new Origin("01-cluster.yaml", 3));
    }

    @Test
    void reportsEveryProblemWithFileAndDocument() throws Exception {
        List<String> problems = new ManifestLoader().load(MIXED).problems().stream().map(Object::toString).toList();
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("01-cluster.yaml document 4: unsupported kind apps/v1/Deployment"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml document 1: shop/back-from-front: spec.ingress[0].from[1].ipBlock.cidr: invalid CIDR"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml document 1: shop/back-from-front: spec.ingress[0].ports[1].port: port 99999"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml document 2: unreadable document"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml document 2: NetworkPolicy shop/front-broken could not be read; it isolates the pods it selects"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml document 3: "));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("sub/03-list.json document 1: unsupported kind v1/ConfigMap"));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("sub/03-list.json document 1: Pod shop/front defined again"));
    }

    @Test
    void anUnreadablePolicyFailsClosedForThePodsItSelects() throws Exception {
        LoadedManifests m = new ManifestLoader().load(MIXED);
        NetworkPolicy broken = m.policies().stream().filter(p -> p.getMetadata().getName().equals("front-broken")).findFirst().orElseThrow();
        assertThat(broken.getSpec().getPodSelector().getMatchLabels()).containsEntry("app", "front");
        assertThat(broken.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
        assertThat(broken.getSpec().getIngress()).isEmpty();
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        m.namespaces().forEach(calc::upsertNamespace);
        m.pods().forEach(calc::upsertPod);
        m.policies().forEach(calc::upsertPolicy);
        NodeSnapshot n1 = calc.snapshot("n1");
        assertThat(n1.getEndpoints(0).getEndpoint().getTiers(0).getIngressPoliciesList()).containsExactly("shop/front-broken");
        assertThat(n1.getEndpoints(0).getEndpoint().getTiers(0).getEgressPoliciesList()).containsExactly("shop/front-broken");
    }

    @Test
    void splitsDocumentsOnSeparatorLinesOnly() {
        assertThat(ManifestLoader.splitDocuments("a: 1\n---\n# only a comment\n---\nb: '---'\n...\n--- c: 3\n")
                .stream().map(String::strip)).containsExactly("a: 1", "b: '---'", "c: 3");
    }

    @Test
    void whatIfDefaultsAssignAddressesDeterministically() {
        LoadedManifests m = new ManifestLoader().loadText("t.yaml", """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: b, name: p}
                spec: {containers: [{name: c, image: i}]}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: a, name: q}
                spec: {containers: [{name: c, image: i}]}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: a, name: has-ip}
                spec: {nodeName: real, containers: [{name: c, image: i}]}
                status: {podIP: 10.5.0.1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: a, name: host}
                spec: {hostNetwork: true, containers: [{name: c, image: i}]}
                """);
        var pods = new java.util.ArrayList<>(m.pods());
        var assigned = WhatIfDefaults.apply(pods, "10.5.0.0/30", WhatIfDefaults.DEFAULT_NODE);
        // Sorted by namespace/name; 10.5.0.1 is taken by a/has-ip, so a/q gets .2 and b/p .3.
        assertThat(assigned).containsExactly(new WhatIfDefaults.Assignment("a/q", "10.5.0.2"),
                new WhatIfDefaults.Assignment("b/p", "10.5.0.3"));
        assertThat(pods.get(0).getSpec().getNodeName()).isEqualTo("real");
        assertThat(pods.get(0).getStatus().getPhase()).isEqualTo("Running");
        assertThat(pods.get(2).getSpec().getNodeName()).isEqualTo(WhatIfDefaults.DEFAULT_NODE);
        assertThat(pods.get(1).getStatus().getPodIP()).isNull(); // hostNetwork left alone
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> WhatIfDefaults.apply(
                new java.util.ArrayList<>(new ManifestLoader().loadText("t.yaml", """
                        apiVersion: v1
                        kind: Pod
                        metadata: {namespace: b, name: p}
                        """).pods()), "10.5.0.0/32", "n")).hasMessageContaining("exhausted");
    }
}
