// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.manifests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.calc.Staging;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ManifestLoaderTest {
    private static final Path MIXED = Path.of("src/test/resources/manifests/mixed");

    static final String GOOD = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: x, name: deny-all}
            spec: {podSelector: {}}
            """;

    private static TreeMap<String, byte[]> files(Object... pathsAndContents) {
        TreeMap<String, byte[]> m = new TreeMap<>();
        for (int i = 0; i < pathsAndContents.length; i += 2) {
            Object c = pathsAndContents[i + 1];
            m.put(
                    (String) pathsAndContents[i],
                    c instanceof byte[] b ? b : ((String) c).getBytes(StandardCharsets.UTF_8));
        }
        return m;
    }

    @Test
    void loadsKindsFromSeveralDocumentsFilesAndLists() throws Exception {
        LoadedManifests m = new ManifestLoader().load(MIXED);
        assertThat(m.namespaces()).extracting(n -> n.getMetadata().getName()).containsExactly("shop");
        assertThat(m.pods()).extracting(p -> p.getMetadata().getName()).containsExactly("back", "front");
        assertThat(m.policies())
                .extracting(p -> p.getMetadata().getName())
                .containsExactly("back-from-front", "front-narrowed");
        // The List in sub/03-list.json redefines shop/front: later wins, reported.
        assertThat(m.pods().get(1).getMetadata().getLabels()).containsEntry("v", "2");
        assertThat(m.origins().get("Pod shop/front")).isEqualTo(new Origin("sub/03-list.json", 1, 2, 3));
        assertThat(m.origins().get("Pod shop/back")).isEqualTo(new Origin("01-cluster.yaml", 3, 20, 1));
    }

    @Test
    void reportsEveryWarningWithFileLineAndDocument() throws Exception {
        LoadedManifests m = new ManifestLoader().load(MIXED);
        List<String> problems = m.problems().stream().map(Object::toString).toList();
        assertThat(problems).noneSatisfy(p -> assertThat(p).containsAnyOf("Deployment", "ConfigMap"));
        assertThat(m.skipped().summary()).isEqualTo("skipped 2 objects of kinds not read: Deployment, ConfigMap");
        assertThat(problems)
                .anySatisfy(
                        p -> assertThat(p)
                                .startsWith(
                                        "02-policies.yaml:1:1 (document 1): shop/back-from-front: spec.ingress[0].from[1].ipBlock.cidr: invalid CIDR"));
        assertThat(problems)
                .anySatisfy(
                        p -> assertThat(p)
                                .startsWith(
                                        "02-policies.yaml:1:1 (document 1): shop/back-from-front: spec.ingress[0].ports[1].port: port 99999"));
        assertThat(problems)
                .anySatisfy(p -> assertThat(p).startsWith("02-policies.yaml:11:1 (document 2): shop/front-narrowed: "));
        assertThat(problems)
                .anySatisfy(
                        p -> assertThat(p)
                                .startsWith(
                                        "sub/03-list.json:2:3 (document 1): Pod shop/front defined again; replaces 01-cluster.yaml:9:1 (document 2)"));
    }

    @Test
    void aPolicyWithAnUnusablePartIsNarrowedNotDropped() throws Exception {
        LoadedManifests m = new ManifestLoader().load(MIXED);
        NetworkPolicy narrowed = m.policies().stream()
                .filter(p -> p.getMetadata().getName().equals("front-narrowed"))
                .findFirst()
                .orElseThrow();
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        m.namespaces().forEach(calc::upsertNamespace);
        m.pods().forEach(calc::upsertPod);
        m.policies().forEach(calc::upsertPolicy);
        NodeSnapshot n1 = calc.snapshot("n1");
        assertThat(n1.getEndpoints(0).getEndpoint().getTiers(0).getIngressPoliciesList())
                .containsExactly("shop/" + narrowed.getMetadata().getName());
    }

    @Test
    void aRuleWithoutAUsablePeerMatchesNothingAndNamesNoSetOfItsNamedPorts() throws Exception {
        // Found by ManifestLoaderFuzzTest: the rule kept its named port, whose set was never registered.
        LoadedManifests m = new ManifestLoader().load(files("p.yaml", """
                apiVersion: v1
                kind: Pod
                metadata: {name: a, namespace: x, labels: {pod: a}}
                spec: {nodeName: n1, containers: [{name: c, image: i, ports: [{name: serve-80-tcp, containerPort: 80}]}]}
                status: {phase: Running, podIP: 10.0.0.1}
                ---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {name: p, namespace: x}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  ingress:
                  - from: [{namespaceSelector: {matchExpressions: [{key: ns, operator: Sometimes, values: [x]}]}}]
                    ports: [{port: serve-80-tcp}]
                """));
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        m.pods().forEach(calc::upsertPod);
        m.policies().forEach(calc::upsertPolicy);
        NodeSnapshot n1 = calc.snapshot("n1");
        assertThat(n1.getPoliciesList()).hasSize(1);
        io.kubeverdict.proto.v1.Rule rule = n1.getPolicies(0).getPolicy().getInboundRules(0);
        assertThat(rule.getAllPeers()).isFalse();
        assertThat(rule.getPeersCount()).isZero();
        assertThat(rule.getPortsCount()).isZero();
        assertThat(n1.getIpSetsList()).isEmpty();
        assertThat(n1.getEndpoints(0).getEndpoint().getTiers(0).getIngressPoliciesList())
                .containsExactly("x/p");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#all")
    void anyUnreadableFileOrDocumentRejectsTheWholeLoad(BadManifests.Case bad) {
        ManifestLoadException e = catchThrowableOfType(
                ManifestLoadException.class,
                () -> new ManifestLoader(BadManifests.SMALL_LIMITS)
                        .load(files("a-good.yaml", GOOD, bad.file(), bad.content())));
        assertThat(e).as("rejected").isNotNull();
        assertThat(e.errors()).hasSize(1);
        assertThat(e.getMessage()).startsWith(bad.where()).contains(bad.says());
    }

    @Test
    void errorsOfSeveralFilesAreAllReportedInFileOrder() {
        List<BadManifests.Case> all = BadManifests.all();
        ManifestLoadException e = catchThrowableOfType(
                ManifestLoadException.class,
                () -> new ManifestLoader(BadManifests.SMALL_LIMITS)
                        .load(files(
                                "a/" + all.get(0).file(),
                                all.get(0).content(),
                                "b/" + all.get(1).file(),
                                all.get(1).content())));
        assertThat(e.errors())
                .extracting(Object::toString)
                .satisfiesExactly(
                        first -> assertThat(first).startsWith("a/" + all.get(0).where()),
                        second ->
                                assertThat(second).startsWith("b/" + all.get(1).where()));
        assertThat(e.getMessage()).endsWith("(and 1 more)");
    }

    @Test
    void theDefaultLimitsReadBigDocumentsAndRefuseDeepOnesWithoutOverflowingTheStack() throws Exception {
        // Over SnakeYAML's default of 3 MiB per document, which used to drop it.
        String big = "apiVersion: v1\nkind: Namespace\nmetadata: {name: big, annotations: {a: '"
                + "x".repeat(4 * 1024 * 1024) + "'}}\n";
        assertThat(new ManifestLoader().loadText("big.yaml", big).namespaces()).hasSize(1);
        String deep = "a: " + "[".repeat(200_000) + "]".repeat(200_000) + "\n";
        assertThatThrownBy(() -> new ManifestLoader().loadText("deep.yaml", deep))
                .isInstanceOf(ManifestLoadException.class)
                .hasMessageContaining("nesting depth");
        String deepJson = "{\"a\": " + "[".repeat(200_000) + "]".repeat(200_000) + "}";
        assertThatThrownBy(() -> new ManifestLoader().loadText("deep.json", deepJson))
                .isInstanceOf(ManifestLoadException.class)
                .hasMessageStartingWith("deep.json:1:");
    }

    @Test
    void typedListsAreReadAndTheirItemsMayOmitKindAndApiVersion() throws Exception {
        LoadedManifests m = new ManifestLoader().loadText("list.yaml", """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicyList
                items:
                - metadata: {namespace: x, name: a}
                  spec: {podSelector: {}}
                - apiVersion: networking.k8s.io/v1
                  kind: NetworkPolicy
                  metadata: {namespace: x, name: b}
                  spec: {podSelector: {}}
                ---
                apiVersion: v1
                kind: PodList
                items: []
                """);
        assertThat(m.policies()).extracting(p -> p.getMetadata().getName()).containsExactly("a", "b");
        assertThat(m.origins().get("NetworkPolicy x/a")).isEqualTo(new Origin("list.yaml", 1, 4, 3));
        assertThat(m.problems()).isEmpty();
    }

    @Test
    void aListInsideAListIsAnError() {
        assertThatThrownBy(() -> new ManifestLoader().loadText("l.yaml", """
                apiVersion: v1
                kind: List
                items:
                - {apiVersion: networking.k8s.io/v1, kind: NetworkPolicyList, items: []}
                """))
                .isInstanceOf(ManifestLoadException.class)
                .hasMessage("l.yaml:4:3 (document 1): a NetworkPolicyList inside a list is not supported");
    }

    @Test
    void onlyVisibleManifestFilesAreRead(@TempDir Path dir) throws Exception {
        // The layout of a ConfigMap volume: files are links through "..data" to a hidden directory.
        Path data = Files.createDirectories(dir.resolve("..2024_01_01_00_00_00.1"));
        Files.writeString(data.resolve("np.yaml"), GOOD);
        Files.createSymbolicLink(dir.resolve("..data"), data.getFileName());
        Files.createSymbolicLink(dir.resolve("np.yaml"), Path.of("..data/np.yaml"));
        Files.writeString(dir.resolve(".hidden.yaml"), "not: [read");
        Files.writeString(dir.resolve("notes.txt"), "not: [read");
        assertThat(ManifestFiles.read(dir).keySet()).containsExactly("np.yaml");
        LoadedManifests m = new ManifestLoader().load(dir);
        assertThat(m.policies()).hasSize(1);
        assertThat(m.problems()).isEmpty(); // the hidden copy is not read a second time
    }

    @Test
    void aDirectoryThatIsALinkIsReadThroughIt(@TempDir Path dir) throws Exception {
        Path v1 = Files.createDirectories(dir.resolve("versions/v1/sub"));
        Files.writeString(v1.resolve("np.yaml"), GOOD);
        Path link = Files.createSymbolicLink(dir.resolve("current"), Path.of("versions/v1"));
        assertThat(ManifestFiles.read(link).keySet()).containsExactly("sub/np.yaml");
        assertThat(new ManifestLoader().load(link).policies()).hasSize(1);
    }

    @Test
    void splitDocumentsNumbersDocumentsLikeTheLoader() throws Exception {
        assertThat(ManifestLoader.splitDocuments("a: 1\n---\n# only a comment\n---\nb: '---'\n...\n--- c: 3\n").stream()
                        .map(String::strip))
                .containsExactly("a: 1", "b: '---'", "c: 3");
        String text = Files.readString(MIXED.resolve("01-cluster.yaml"));
        List<String> docs = ManifestLoader.splitDocuments(text);
        Map<String, Origin> origins = new ManifestLoader().load(MIXED).origins();
        assertThat(docs.get(origins.get("Pod shop/back").document() - 1)).contains("name: back");
    }

    @Test
    void whatIfDefaultsAssignAddressesDeterministically() throws Exception {
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
        assertThat(assigned)
                .containsExactly(
                        new WhatIfDefaults.Assignment("a/q", "10.5.0.2"),
                        new WhatIfDefaults.Assignment("b/p", "10.5.0.3"));
        assertThat(pods.get(0).getSpec().getNodeName()).isEqualTo("real");
        assertThat(pods.get(0).getStatus().getPhase()).isEqualTo("Running");
        assertThat(pods.get(2).getSpec().getNodeName()).isEqualTo(WhatIfDefaults.DEFAULT_NODE);
        assertThat(pods.get(1).getStatus().getPodIP()).isNull(); // hostNetwork left alone
        var onePod = new java.util.ArrayList<>(
                new ManifestLoader().loadText("t.yaml", """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: b, name: p}
                """).pods());
        assertThatThrownBy(() -> WhatIfDefaults.apply(onePod, "10.5.0.0/32", "n"))
                .hasMessageContaining("exhausted");
    }

    static final String LIVE_WORLD = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {name: a, namespace: x, labels: {app: a}}
            spec: {nodeName: n1, containers: [{name: c, image: i}]}
            status: {phase: Running, podIP: 10.0.0.1}
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: allow-all, namespace: x}
            spec: {podSelector: {}, ingress: [{}]}
            """;

    static final String STAGED_DENY_ALL = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: deny-all, namespace: x}
            spec: {podSelector: {}, policyTypes: [Ingress]}
            """;

    @Test
    void policiesUnderTheStagedDirectoryAreStagedAndTheOthersLive() throws Exception {
        LoadedManifests m = new ManifestLoader()
                .load(files(
                        "world.yaml",
                        LIVE_WORLD,
                        "staged/deny-all.yaml",
                        STAGED_DENY_ALL,
                        "x/staged/not-top.yaml",
                        """
                        apiVersion: networking.k8s.io/v1
                        kind: NetworkPolicy
                        metadata: {name: nested, namespace: x}
                        spec: {podSelector: {matchLabels: {app: none}}}
                        """));
        assertThat(m.policies())
                .extracting(p -> p.getMetadata().getName() + "=" + Staging.isStaged(p.getMetadata()))
                .containsExactlyInAnyOrder("allow-all=false", "deny-all=true", "nested=false");

        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        m.namespaces().forEach(calc::upsertNamespace);
        m.pods().forEach(calc::upsertPod);
        m.policies().forEach(calc::upsertPolicy);
        NodeSnapshot n1 = calc.snapshot("n1");
        assertThat(n1.getPoliciesList())
                .anySatisfy(p -> assertThat(p.getId().getName()).isEqualTo("staged:x/deny-all"));
        assertThat(n1.getEndpoints(0).getEndpoint().getTiersList())
                .allSatisfy(t -> assertThat(t.getIngressPoliciesList()).containsExactly("x/allow-all"));
        assertThat(n1.getEndpoints(0).getEndpoint().getStagedTiersList())
                .anySatisfy(t -> assertThat(t.getIngressPoliciesList()).contains("staged:x/deny-all"));
    }

    @Test
    void whatIsNotAStagedPolicyUnderTheStagedDirectoryRejectsTheLoadWithItsPlace() {
        ManifestLoadException e = catchThrowableOfType(
                ManifestLoadException.class,
                () -> new ManifestLoader()
                        .load(files(
                                "world.yaml",
                                LIVE_WORLD,
                                "staged/a.yaml",
                                STAGED_DENY_ALL + """
                                        ---
                                        apiVersion: v1
                                        kind: Pod
                                        metadata: {name: b, namespace: x}
                                        ---
                                        apiVersion: apps/v1
                                        kind: Deployment
                                        metadata: {name: d, namespace: x}
                                        ---
                                        apiVersion: networking.k8s.io/v1
                                        kind: NetworkPolicy
                                        metadata: {name: not-staged, namespace: x, annotations: {kube-verdict.io/staged: "false"}}
                                        spec: {podSelector: {}}
                                        """,
                                "staged/b.yaml",
                                """
                                        apiVersion: networking.k8s.io/v1
                                        kind: NetworkPolicy
                                        metadata: {name: allow-all, namespace: x}
                                        spec: {podSelector: {}}
                                        """)));
        assertThat(e).as("rejected").isNotNull();
        assertThat(e.errors())
                .extracting(Object::toString)
                .satisfiesExactly(
                        pod -> assertThat(pod).startsWith("staged/a.yaml:6:").contains("Pod under staged/"),
                        deployment -> assertThat(deployment)
                                .startsWith("staged/a.yaml:10:")
                                .contains("Deployment under staged/"),
                        annotated -> assertThat(annotated)
                                .startsWith("staged/a.yaml:14:")
                                .contains("annotated as not staged"),
                        twice -> assertThat(twice) // the later file in path order, naming the earlier
                                .startsWith("world.yaml:11:")
                                .contains("x/allow-all is both live and staged (staged/b.yaml:1:"));
    }
}
