// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import static io.kubeverdict.controlplane.fixtures.Objects.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.calc.Selector.Op;
import io.kubeverdict.controlplane.calc.Selector.Requirement;
import io.kubeverdict.controlplane.fixtures.NetpolWorld;
import io.kubeverdict.controlplane.fixtures.Objects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** IP-set identity is the parsed selector, and selectors hold only labels Kubernetes accepts. */
class SelectorIdentityTest {

    private static Selector selector(Requirement... requirements) {
        return Selector.of(List.of(requirements));
    }

    @Test
    void aValueWithACommaIsNotTwoValues() {
        // Both read "pod IN (a,b)" when the values are joined with commas.
        Selector two = selector(new Requirement("pod", Op.IN, List.of("b", "a")));
        Selector one = selector(new Requirement("pod", Op.IN, List.of("a,b")));
        assertThat(two.canonical()).isNotEqualTo(one.canonical());
        assertThat(two).isNotEqualTo(one);
        assertThat(IpSetDef.pods("x", two).id())
                .isNotEqualTo(IpSetDef.pods("x", one).id());
        assertThat(IpSetDef.pods("x", two)).isNotEqualTo(IpSetDef.pods("x", one));
    }

    @Test
    void aKeyWithSpacesIsNotTwoRequirements() {
        // One requirement whose key contains the text of a separator and another requirement,
        // versus those two requirements: equal as "key OP (values)" joined with "; ".
        Selector tricky = selector(new Requirement("pod IN (a); pod", Op.IN, List.of("b")));
        Selector pair =
                selector(new Requirement("pod", Op.IN, List.of("a")), new Requirement("pod", Op.IN, List.of("b")));
        assertThat(tricky.canonical()).isNotEqualTo(pair.canonical());
        assertThat(IpSetDef.podsInNamespaces(tricky, Selector.ALL).id())
                .isNotEqualTo(IpSetDef.podsInNamespaces(pair, Selector.ALL).id());
        // An empty value next to another is not one value with a leading comma either.
        assertThat(selector(new Requirement("pod", Op.IN, List.of("", "a"))))
                .isNotEqualTo(selector(new Requirement("pod", Op.IN, List.of(",a"))));
    }

    @Test
    void theNamespaceAndPortNameOfASetAreDelimitedToo() {
        IpSetDef plain = IpSetDef.pods("x", Selector.ALL);
        assertThat(IpSetDef.pods("x pods={}", Selector.ALL).id()).isNotEqualTo(plain.id());
        IpSetDef http = IpSetDef.namedPort("x", null, Selector.ALL, "http", Protocol.TCP);
        assertThat(IpSetDef.namedPort("x", null, Selector.ALL, "http/UDP", Protocol.TCP)
                        .id())
                .isNotEqualTo(http.id());
    }

    @Test
    void sameSelectorInAnotherOrderIsTheSameSet() {
        Selector a = selector(
                new Requirement("pod", Op.IN, List.of("b", "a", "a")), new Requirement("app", Op.EXISTS, List.of()));
        Selector b = selector(
                new Requirement("app", Op.EXISTS, List.of()),
                new Requirement("pod", Op.IN, List.of("a", "b")),
                new Requirement("app", Op.EXISTS, List.of()));
        assertThat(a).isEqualTo(b);
        assertThat(IpSetDef.pods("x", a).id()).isEqualTo(IpSetDef.pods("x", b).id());
    }

    private static final String LIST_SELECTOR = """
            metadata: {name: from-list}
            spec:
              podSelector: {matchLabels: {pod: a}}
              ingress: [{from: [{podSelector: {matchExpressions: [{key: pod, operator: In, values: [a, b]}]}}]}]
            """;
    private static final String COMMA_SELECTOR = """
            metadata: {name: from-comma}
            spec:
              podSelector: {matchLabels: {pod: c}}
              ingress: [{from: [{podSelector: {matchExpressions: [{key: pod, operator: In, values: ["a,b"]}]}}]}]
            """;

    @Test
    void commaValueAndValueListGiveTheirOwnMatricesInEitherOrder() {
        List<Pod> pods = new ArrayList<>(NetpolWorld.pods());
        // A pod labelled with the very text (only manifests can say so; the API server refuses it).
        pods.add(Objects.pod("x", "comma", Map.of("pod", "a,b"), "node-1", List.of("10.0.1.9"), List.of()));
        List<NetworkPolicy> forward = List.of(policy("x", LIST_SELECTOR), policy("x", COMMA_SELECTOR));
        List<NetworkPolicy> backward = List.of(forward.get(1), forward.get(0));
        OfflineCluster one = new OfflineCluster(NetpolWorld.namespaces(), pods, forward);
        OfflineCluster other = new OfflineCluster(NetpolWorld.namespaces(), pods, backward);
        assertThat(one.snapshots()).isEqualTo(other.snapshots());
        String xa = NetpolWorld.ip("x/a");
        String xc = NetpolWorld.ip("x/c");
        for (OfflineCluster cluster : List.of(one, other)) {
            for (String src : List.of("x/a", "x/b", "x/c", "y/a", "y/b", "z/c")) {
                String ip = NetpolWorld.ip(src);
                boolean fromAOrB = src.equals("x/a") || src.equals("x/b");
                if (!src.equals("x/a")) {
                    assertThat(cluster.allowed(ip, xa, 6, 80))
                            .as(src + " -> x/a")
                            .isEqualTo(fromAOrB);
                }
                // "a,b" is no label value: the peer is dropped and x/c admits nobody.
                if (!src.equals("x/c")) {
                    assertThat(cluster.allowed(ip, xc, 6, 80))
                            .as(src + " -> x/c")
                            .isFalse();
                }
            }
            assertThat(cluster.allowed("10.0.1.9", xa, 6, 80))
                    .as("x/comma -> x/a")
                    .isFalse();
            assertThat(cluster.allowed("10.0.1.9", xc, 6, 80))
                    .as("x/comma -> x/c")
                    .isFalse();
        }
    }

    @Test
    void anInvalidValueIsReportedAndItsPeerMatchesNothing() {
        IncrementalPolicyCalculator calc = world();
        calc.upsertPolicy(policy("x", COMMA_SELECTOR));
        assertThat(calc.problems())
                .extracting(PolicyProblem::field)
                .containsExactlyInAnyOrder("spec.ingress[0].from[0].podSelector", "spec.ingress[0].from");
        assertThat(calc.problems())
                .anySatisfy(p -> assertThat(p.message())
                        .contains("invalid label value \"a,b\"")
                        .endsWith("peer dropped"));
        Rule rule = policyOn(calc, "x/c", "x/from-comma").getPolicy().getInboundRules(0);
        assertThat(rule.getAllPeers()).isFalse();
        assertThat(rule.getPeersList()).isEmpty();
        assertThat(calc.ipSetCount()).isZero();
    }

    @Test
    void aNullMatchExpressionIsReportedAndItsPeerMatchesNothing() {
        // `matchExpressions: [null]` (found by ManifestLoaderFuzzTest): the API server would refuse it.
        IncrementalPolicyCalculator calc = world();
        calc.upsertPolicy(policy("x", """
                metadata: {name: peer}
                spec:
                  podSelector: {matchLabels: {pod: a}}
                  ingress: [{from: [{podSelector: {matchExpressions: [null]}}]}]
                """));
        assertThat(calc.problems())
                .anySatisfy(p -> assertThat(p.message()).contains("matchExpressions has an empty entry"));
        Rule rule = policyOn(calc, "x/a", "x/peer").getPolicy().getInboundRules(0);
        assertThat(rule.getAllPeers()).isFalse();
        assertThat(rule.getPeersList()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{matchLabels: {\"a b\": x}}",
                "{matchLabels: {pod: \"a b\"}}",
                "{matchLabels: {pod: -a}}",
                "{matchExpressions: [{key: \"-pod\", operator: Exists}]}",
                "{matchExpressions: [{key: \"pod-\", operator: Exists}]}",
                "{matchExpressions: [{key: \"Example.com/pod\", operator: Exists}]}",
                "{matchExpressions: [{key: \"/pod\", operator: Exists}]}",
                "{matchExpressions: [{key: \"example.com/\", operator: Exists}]}",
                "{matchExpressions: [{key: \"a/b/c\", operator: Exists}]}",
                "{matchExpressions: [{key: \"k8s.io/a b\", operator: DoesNotExist}]}",
                "{matchExpressions: [{key: pod, operator: NotIn, values: [a, \"b\\u00e9\"]}]}",
                "{matchExpressions: [{key: pod, operator: In, values: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]}]}",
                "{matchExpressions: [{key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, operator: Exists}]}",
            })
    void invalidKeysAndValuesAreReportedAndNarrow(String selector) {
        // As a peer (pod and namespace selector): the peer is dropped, the rule matches nothing.
        for (String peer : List.of("podSelector: " + selector, "namespaceSelector: " + selector)) {
            IncrementalPolicyCalculator calc = world();
            calc.upsertPolicy(policy("x", """
                    metadata: {name: peer}
                    spec:
                      podSelector: {matchLabels: {pod: a}}
                      ingress: [{from: [{%s}]}]
                    """.formatted(peer)));
            assertThat(calc.problems()).as(peer).hasSize(2);
            assertThat(calc.problems())
                    .as(peer)
                    .anySatisfy(p -> assertThat(p.message()).containsPattern("invalid label (key|value)"));
            Rule rule = policyOn(calc, "x/a", "x/peer").getPolicy().getInboundRules(0);
            assertThat(rule.getAllPeers()).isFalse();
            assertThat(rule.getPeersList()).isEmpty();
        }
        // As the policy's own podSelector: every pod of the namespace is isolated with no rules.
        IncrementalPolicyCalculator calc = world();
        calc.upsertPolicy(policy("x", """
                metadata: {name: own}
                spec:
                  podSelector: %s
                  ingress: [{}]
                """.formatted(selector)));
        assertThat(calc.problems()).extracting(PolicyProblem::field).containsExactly("spec.podSelector");
        for (String pod : List.of("x/a", "x/b", "x/c")) {
            assertThat(policyOn(calc, pod, "x/own").getPolicy().getInboundRulesList())
                    .as(pod)
                    .isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{matchLabels: {pod: \"\"}}",
                "{matchLabels: {example.com/pod-name_1.x: A.b-c_9}}",
                "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [x, \"\"]}]}",
                "{matchExpressions: [{key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, operator: Exists}]}",
                "{matchExpressions: [{key: pod, operator: In, values: [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]}]}",
            })
    void validKeysAndValuesAreAccepted(String selector) {
        IncrementalPolicyCalculator calc = world();
        calc.upsertPolicy(policy("x", """
                metadata: {name: ok}
                spec:
                  podSelector: %s
                  ingress: [{from: [{podSelector: %s}]}]
                """.formatted(selector, selector)));
        assertThat(calc.problems()).isEmpty();
    }

    @Test
    void keyPrefixesAreDnsSubdomainsOfAtMost253Characters() {
        String label = "a".repeat(63);
        String prefix253 = String.join(".", label, label, label, "a".repeat(61));
        assertThat(prefix253).hasSize(253);
        assertThat(Labels.keyProblem(prefix253 + "/name")).isEmpty();
        assertThat(Labels.keyProblem(prefix253 + "a/name")).isPresent();
        assertThat(Labels.keyProblem("a..b/name")).isPresent();
        assertThat(Labels.keyProblem("a_b/name")).isPresent();
        assertThat(Labels.keyProblem("")).isPresent();
        assertThat(Labels.valueProblem("")).isEmpty();
        assertThat(Labels.valueProblem("a\nb")).get().asString().contains("\\u000a");
    }

    private static IncrementalPolicyCalculator world() {
        IncrementalPolicyCalculator calc = new IncrementalPolicyCalculator();
        NetpolWorld.namespaces().forEach(calc::upsertNamespace);
        NetpolWorld.pods().forEach(calc::upsertPod);
        return calc;
    }

    private static ActivePolicy policyOn(IncrementalPolicyCalculator calc, String pod, String policy) {
        String[] p = pod.split("/");
        NodeSnapshot s = calc.snapshot(NetpolWorld.node(p[0], p[1]));
        return s.getPoliciesList().stream()
                .filter(x -> x.getId().getName().equals(policy))
                .findFirst()
                .orElseThrow();
    }
}
