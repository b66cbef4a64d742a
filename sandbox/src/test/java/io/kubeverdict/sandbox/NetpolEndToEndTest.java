// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The upstream Netpol e2e scenarios on real packets: one control-plane process on a manifest
 * directory, one agent process per node inside its node namespace, the x,y,z × a,b,c fixture spread
 * over two nodes (so every scenario has same-node and cross-node pairs). Processes start once;
 * each scenario writes its policies into the watched directory, waits until every agent reports it
 * applied, probes every ordered pair and compares with `matrix` on the same manifests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class NetpolEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final ServePort TCP81 = ServePort.parse("81/TCP");
    static final ServePort UDP80 = ServePort.parse("80/UDP");
    static final ServePort UDP81 = ServePort.parse("81/UDP");

    private Path manifests;
    private Sandbox sandbox;

    @BeforeAll
    void startProcesses() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-");
        Files.writeString(manifests.resolve("fixture.yaml"), UpstreamFixture.manifests());
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sb-"),
                new Progress(new java.io.PrintWriter(System.err, true)));
        assertThat(sandbox.placement().nodes()).containsExactly("node-1", "node-2");
        // Every scenario runs with the agents' pod address guard on.
        assertThat(sandbox.placement().podRanges().of())
                .containsOnlyKeys("node-1", "node-2")
                .containsEntry("node-1", List.of("10.244.1.0/24"));
    }

    @AfterAll
    void stopProcesses() throws Exception {
        if (sandbox != null) {
            sandbox.close();
        }
        try (Stream<Path> walk = Files.walk(manifests)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    record Scenario(String name, String policies, List<ServePort> probes) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Scenario> scenarios() {
        return Stream.of(
                new Scenario("no policy: everything connects", "", List.of(TCP80, UDP81)),
                new Scenario("default-deny-ingress in x", policy("x", "deny-ingress", """
                        podSelector: {}
                        policyTypes: [Ingress]
                        """), List.of(TCP80)),
                new Scenario(
                        "default-deny-all in x (ingress and egress)",
                        policy("x", "deny-all", """
                        podSelector: {}
                        policyTypes: [Ingress, Egress]
                        """),
                        List.of(TCP80, UDP80)),
                new Scenario("allow from the same namespace only", policy("x", "allow-same-ns", """
                        podSelector: {}
                        ingress:
                        - from:
                          - podSelector: {}
                        """), List.of(TCP80)),
                new Scenario("allow to x/a from namespace y", policy("x", "allow-from-y", """
                        podSelector: {matchLabels: {pod: a}}
                        ingress:
                        - from:
                          - namespaceSelector: {matchLabels: {ns: "y"}}
                        """), List.of(TCP80)),
                new Scenario(
                        "allow to x/a from pod b of its namespace", policy("x", "allow-from-b", """
                        podSelector: {matchLabels: {pod: a}}
                        ingress:
                        - from:
                          - podSelector: {matchLabels: {pod: b}}
                        """), List.of(TCP80)),
                new Scenario(
                        "namespaceSelector AND podSelector: y and z pods c",
                        policy("x", "allow-ns-and-pod", """
                        podSelector: {matchLabels: {pod: a}}
                        ingress:
                        - from:
                          - namespaceSelector: {matchExpressions: [{key: ns, operator: In, values: ["y", "z"]}]}
                            podSelector: {matchLabels: {pod: c}}
                        """),
                        List.of(TCP80)),
                new Scenario("namespaceSelector OR podSelector", policy("x", "allow-ns-or-pod", """
                        podSelector: {matchLabels: {pod: a}}
                        ingress:
                        - from:
                          - namespaceSelector: {matchLabels: {ns: "y"}}
                          - podSelector: {matchLabels: {pod: c}}
                        """), List.of(TCP80)),
                new Scenario("named port serve-81-tcp only", policy("x", "allow-named-81", """
                        podSelector: {matchLabels: {pod: a}}
                        ingress:
                        - ports:
                          - port: serve-81-tcp
                        """), List.of(TCP80, TCP81)),
                new Scenario(
                        "numeric port 80 from namespace z", policy("x", "allow-80-from-z", """
                        podSelector: {}
                        ingress:
                        - from:
                          - namespaceSelector: {matchLabels: {ns: z}}
                          ports:
                          - port: 80
                            protocol: TCP
                        """), List.of(TCP80, TCP81)),
                new Scenario(
                        "multiple ports: 80/TCP and 81/UDP",
                        policy("y", "allow-two-ports", """
                        podSelector: {matchLabels: {pod: b}}
                        ingress:
                        - ports:
                          - {port: 80, protocol: TCP}
                          - {port: 81, protocol: UDP}
                        """),
                        List.of(TCP80, TCP81, UDP80, UDP81)),
                new Scenario("endPort range 81-82", policy("z", "allow-range", """
                        podSelector: {}
                        ingress:
                        - ports:
                          - {port: 81, endPort: 82, protocol: TCP}
                        """), List.of(TCP80, TCP81)),
                new Scenario(
                        "egress from x/a only to namespace y", policy("x", "egress-to-y", """
                        podSelector: {matchLabels: {pod: a}}
                        policyTypes: [Egress]
                        egress:
                        - to:
                          - namespaceSelector: {matchLabels: {ns: "y"}}
                        """), List.of(TCP80, UDP80)),
                new Scenario(
                        "egress on UDP only, ingress untouched", policy("z", "egress-udp", """
                        podSelector: {matchLabels: {pod: c}}
                        policyTypes: [Egress]
                        egress:
                        - ports:
                          - {port: 80, protocol: UDP}
                        """), List.of(TCP80, UDP80)),
                new Scenario(
                        "ingress and egress policies on different nodes combine",
                        policy("x", "x-egress-to-b", """
                                podSelector: {}
                                policyTypes: [Egress]
                                egress:
                                - to:
                                  - namespaceSelector: {}
                                    podSelector: {matchLabels: {pod: b}}
                                """) + "---\n" + policy("y", "y-b-from-x", """
                                podSelector: {matchLabels: {pod: b}}
                                ingress:
                                - from:
                                  - namespaceSelector: {matchLabels: {ns: x}}
                                """),
                        List.of(TCP80)));
    }

    static String policy(String namespace, String name, String spec) {
        return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  namespace: " + namespace
                + "\n  name: " + name + "\nspec:\n" + spec.indent(2);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void observedMatchesTheEngine(Scenario scenario) throws Exception {
        apply(UpstreamFixture.manifests(), scenario.policies());
        List<ProbeResult> results = probeAndCompare(scenario.probes());
        if (!scenario.policies().isEmpty()) {
            // Every scenario restricts something: a system that allowed everything could not pass.
            assertThat(results).anyMatch(NetpolEndToEndTest::someDenied);
        } else {
            assertThat(results).noneMatch(NetpolEndToEndTest::someDenied);
        }
    }

    @Test
    void ipBlockWithExcept() throws Exception {
        Map<String, List<String>> ips = sandbox.placement().ipsOf();
        String ya = ips.get("y/a").get(0);
        String zb = ips.get("z/b").get(0);
        // Ingress to x/a from the pod CIDR except y/a; egress from x/b only to z/b's address.
        apply(
                UpstreamFixture.manifests(),
                policy("x", "ipblock-ingress", """
                podSelector: {matchLabels: {pod: a}}
                ingress:
                - from:
                  - ipBlock: {cidr: 10.244.0.0/16, except: [%s/32]}
                """.formatted(ya)) + "---\n"
                        + policy("x", "ipblock-egress", """
                podSelector: {matchLabels: {pod: b}}
                policyTypes: [Egress]
                egress:
                - to:
                  - ipBlock: {cidr: %s/32}
                """.formatted(zb)));
        List<ProbeResult> results = probeAndCompare(List.of(TCP80));
        assertThat(results.get(0).expected().allowed("y/a", "x/a")).isFalse();
        assertThat(results.get(0).expected().allowed("y/b", "x/a")).isTrue();
        assertThat(results.get(0).expected().allowed("x/b", "z/b")).isTrue();
        assertThat(results.get(0).expected().allowed("x/b", "z/c")).isFalse();
    }

    @Test
    void policyUpdateAndDeleteMidTest() throws Exception {
        String fromY = policy("x", "allow-to-a", """
                podSelector: {matchLabels: {pod: a}}
                ingress:
                - from:
                  - namespaceSelector: {matchLabels: {ns: "y"}}
                """);
        apply(UpstreamFixture.manifests(), fromY);
        ProbeResult before = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(before.observed().connected("y/b", "x/a")).isTrue();
        assertThat(before.observed().connected("z/b", "x/a")).isFalse();

        // The same policy now allows z instead of y.
        apply(UpstreamFixture.manifests(), fromY.replace("ns: \"y\"", "ns: \"z\""));
        ProbeResult updated = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(updated.observed().connected("y/b", "x/a")).isFalse();
        assertThat(updated.observed().connected("z/b", "x/a")).isTrue();

        // Deleted: x/a is open again.
        apply(UpstreamFixture.manifests(), "");
        ProbeResult deleted = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(someDenied(deleted)).isFalse();
    }

    @Test
    void podAndNamespaceLabelChanges() throws Exception {
        String policy = policy("x", "allow-team-blue", """
                podSelector: {matchLabels: {pod: a}}
                ingress:
                - from:
                  - namespaceSelector: {}
                    podSelector: {matchLabels: {team: blue}}
                """);
        apply(UpstreamFixture.manifests(), policy);
        ProbeResult none = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(none.observed().connected("y/c", "x/a")).isFalse();

        // y/c gets the label: now it may connect (a cross-node pair: y/c on node-2, x/a on node-1).
        apply(UpstreamFixture.manifests(Map.of("y/c", "team: blue")), policy);
        ProbeResult labelled = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(labelled.observed().connected("y/c", "x/a")).isTrue();
        assertThat(labelled.observed().connected("y/b", "x/a")).isFalse();

        // A namespace label: namespace z joins via namespaceSelector.
        String byNamespace = policy("x", "allow-team-blue", """
                podSelector: {matchLabels: {pod: a}}
                ingress:
                - from:
                  - namespaceSelector: {matchLabels: {team: blue}}
                """);
        apply(UpstreamFixture.manifests(), byNamespace);
        assertThat(probeAndCompare(List.of(TCP80)).get(0).observed().connected("z/a", "x/a"))
                .isFalse();
        apply(UpstreamFixture.manifests().replace("    ns: z\n", "    ns: z\n    team: blue\n"), byNamespace);
        ProbeResult nsLabelled = probeAndCompare(List.of(TCP80)).get(0);
        assertThat(nsLabelled.observed().connected("z/a", "x/a")).isTrue();
        assertThat(nsLabelled.observed().connected("y/a", "x/a")).isFalse();
    }

    @Test
    void aRestartedAgentEnforcesTheCurrentPolicies() throws Exception {
        apply(UpstreamFixture.manifests(), policy("y", "deny-ingress", """
                podSelector: {}
                policyTypes: [Ingress]
                """));
        long before = sandbox.agent("node-2").pid();
        sandbox.restartAgent("node-2");
        assertThat(sandbox.agent("node-2").pid()).isNotEqualTo(before);
        assertThat(sandbox.agent("node-2").alive()).isTrue();
        ProbeResult after = probeAndCompare(List.of(TCP80)).get(0);
        // y/a and y/c live on node-2: the new agent denies their ingress again, x/b (node-2) stays open.
        assertThat(after.observed().connected("x/a", "y/a")).isFalse();
        assertThat(after.observed().connected("x/a", "y/c")).isFalse();
        assertThat(after.observed().connected("x/a", "x/b")).isTrue();
    }

    private void apply(String fixture, String policies) throws Exception {
        Files.writeString(manifests.resolve("fixture.yaml"), fixture);
        Path file = manifests.resolve("policies.yaml");
        if (policies.isEmpty()) {
            Files.deleteIfExists(file);
        } else {
            Files.writeString(file, policies);
        }
        assertThat(sandbox.reload())
                .as("pods unchanged, so the running sandbox takes the change")
                .isTrue();
    }

    private List<ProbeResult> probeAndCompare(List<ServePort> probes) throws Exception {
        return PolicyProbes.probeAgreeing(sandbox, probes);
    }

    static boolean someDenied(ProbeResult r) {
        List<String> pods = r.expected().pods();
        return pods.stream()
                .anyMatch(from -> pods.stream()
                        .anyMatch(to -> !from.equals(to) && !r.expected().allowed(from, to)));
    }
}
