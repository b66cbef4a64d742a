// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.CachedFlow;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The admin tiers on real packets, in one sandbox: two Node objects with addresses of their own,
 * pods in x and y on both nodes, and a hostNetwork pod on each node serving at its node's address.
 * Each test writes its admin-tier policies and NetworkPolicies into the watched directory, waits
 * until every agent applied them, probes every ordered pair (hostNetwork pods as sources and
 * targets too) and compares with the engine; then asserts the pairs that make the point, on the
 * observed packets.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class AdminTiersEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");

    static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x, labels: {ns: x}}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: "y", labels: {ns: "y"}}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: infra, labels: {ns: infra}}
            ---
            apiVersion: v1
            kind: Node
            metadata: {name: node-1, labels: {role: worker}}
            status: {addresses: [{type: InternalIP, address: 10.250.0.11}, {type: Hostname, address: node-1}]}
            ---
            apiVersion: v1
            kind: Node
            metadata: {name: node-2, labels: {role: control-plane}}
            status: {addresses: [{type: InternalIP, address: 10.250.0.12}, {type: Hostname, address: node-2}]}
            """ + pod("x", "a", "node-1", "10.244.1.1") + pod("x", "b", "node-2", "10.244.1.2")
            + pod("y", "a", "node-1", "10.244.2.1") + pod("y", "b", "node-2", "10.244.2.2")
            + hostPod("host-1", "node-1") + hostPod("host-2", "node-2");

    static String pod(String namespace, String name, String node, String ip) {
        return """
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: "%s", name: %s, labels: {pod: %s}}
                spec: {nodeName: %s, containers: [{name: c, image: i, ports: [{name: http, containerPort: 80}]}]}
                status: {phase: Running, podIPs: [{ip: %s}]}
                """.formatted(namespace, name, name, node, ip);
    }

    /** A hostNetwork pod without addresses: the sandbox gives it its Node's, as a cluster reports them. */
    static String hostPod(String name, String node) {
        return """
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: infra, name: %s}
                spec: {nodeName: %s, hostNetwork: true, containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}
                """.formatted(name, node);
    }

    private Path manifests;
    private Sandbox sandbox;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-tiers-");
        Files.writeString(manifests.resolve("cluster.yaml"), CLUSTER);
        sandbox = Sandbox.start(
                new SandboxOptions(
                                manifests,
                                2,
                                List.of(TCP80),
                                Placement.DEFAULT_POD_CIDR,
                                Duration.ofMillis(1200),
                                "kvt-sb-")
                        .withAgentArgs("node-1", "--verdict-cache-counters")
                        .withAgentArgs("node-2", "--verdict-cache-counters"),
                new Progress(new java.io.PrintWriter(System.err, true)));
        // The manifests' nodes, addresses and placements, as written.
        assertThat(sandbox.placement().nodes()).containsExactly("node-1", "node-2");
        assertThat(sandbox.placement().ipsOf())
                .containsEntry("x/a", List.of("10.244.1.1"))
                .containsEntry("infra/host-2", List.of("10.250.0.12"));
        assertThat(sandbox.testbed().layout().podNamespace("infra/host-2"))
                .isEqualTo(sandbox.testbed().layout().nodeNamespace("node-2"));
    }

    @AfterAll
    void stop() throws Exception {
        if (sandbox != null) {
            sandbox.close();
        }
        try (Stream<Path> walk = Files.walk(manifests)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void passGoesToTheNetworkPolicyAndWithoutOneToTheBaseline() throws Exception {
        ProbeResult r = applyAndProbe(anp("pass-y-to-x", 10, "x", """
                ingress:
                - {name: y-to-np, action: Pass, from: [{namespaces: {matchLabels: {ns: "y"}}}]}
                """) + anp("deny-y-to-x", 20, "x", """
                ingress:
                - {action: Deny, from: [{namespaces: {matchLabels: {ns: "y"}}}]}
                """)
                + netpol("x", "a-from-y-a", """
                podSelector: {matchLabels: {pod: a}}
                ingress:
                - from:
                  - namespaceSelector: {matchLabels: {ns: "y"}}
                    podSelector: {matchLabels: {pod: a}}
                """) + """
                ---
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: BaselineAdminNetworkPolicy
                metadata: {name: default}
                spec:
                  subject: {namespaces: {matchLabels: {ns: x}}}
                  ingress:
                  - {name: no-y, action: Deny, from: [{namespaces: {matchLabels: {ns: "y"}}}]}
                """);
        // x/a: the Pass skips the admin Deny; the NetworkPolicy admits y/a only (y/a is on x/a's node, y/b not).
        assertThat(r.observed().connected("y/a", "x/a")).isTrue();
        assertThat(r.observed().connected("y/b", "x/a")).isFalse();
        // x/b has no NetworkPolicy: the baseline denies y, from both nodes; x/a is not y and connects.
        assertThat(r.observed().connected("y/a", "x/b")).isFalse();
        assertThat(r.observed().connected("y/b", "x/b")).isFalse();
        assertThat(r.observed().connected("x/a", "x/b")).isTrue();
        String x = "10.244.1.2";
        assertThat(sandbox.expectedCluster()
                        .explain("10.244.2.1", x, 6, 80)
                        .getIngress()
                        .getReason())
                .isEqualTo(
                        "passed by admin/pass-y-to-x ingress[0] (y-to-np) → denied by baseline/default ingress[0] (no-y)");
    }

    @Test
    void cachedKeysCountTheirConnectionsAndTheirPolicysHits() throws Exception {
        applyAndProbe(netpol("x", "from-y", """
                podSelector: {}
                ingress:
                - from:
                  - namespaceSelector: {matchLabels: {ns: "y"}}
                """));
        // y/a and x/a are both on node-1: node-1's agent judges that key's first connection, caches
        // it, and accepts the next round's connection in the kernel.
        ProbeResult again = PolicyProbes.probeAgreeing(sandbox, List.of(TCP80)).get(0);
        assertThat(again.observed().connected("y/a", "x/a")).isTrue();
        CachedFlow yaToXa = sandbox.inspection().cachedFlows("node-1").getFlowsList().stream()
                .filter(f -> f.getTuple().getSrcIp().equals("10.244.2.1")
                        && f.getTuple().getDstIp().equals("10.244.1.1")
                        && f.getTuple().getDstPort() == 80)
                .findFirst()
                .orElseThrow(() -> new AssertionError("y/a -> x/a is not in node-1's cache"));
        assertThat(yaToXa.getConnections())
                .as("judged once, then accepted from the cache")
                .isGreaterThanOrEqualTo(2);
        assertThat(yaToXa.getExplanation().getIngress().getPolicy().getName()).isEqualTo("x/from-y");
        // The agent reads the counts every 10 s into the deciding policy's hits.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        double hits = Double.NaN;
        while (!(hits >= 1) && System.nanoTime() < deadline) {
            hits = MetricsText.sum(
                    sandbox.agentMetrics("node-1"),
                    "kubeverdict_policy_verdict_cache_hits_total",
                    "policy=\"default/x/from-y\"");
            Thread.sleep(500);
        }
        assertThat(hits).as("node-1's hits of x/from-y").isGreaterThanOrEqualTo(1);
    }

    @Test
    void anAdminDenyOverridesANetworkPolicyAllow() throws Exception {
        // v1alpha2 this time: a ClusterNetworkPolicy in the Admin tier.
        ProbeResult r = applyAndProbe(netpol("x", "allow-all", """
                podSelector: {}
                ingress:
                - from:
                  - namespaceSelector: {}
                """) + """
                ---
                apiVersion: policy.networking.k8s.io/v1alpha2
                kind: ClusterNetworkPolicy
                metadata: {name: no-y-to-x-b}
                spec:
                  tier: Admin
                  priority: 5
                  subject: {pods: {namespaceSelector: {matchLabels: {ns: x}}, podSelector: {matchLabels: {pod: b}}}}
                  ingress:
                  - {action: Deny, from: [{namespaces: {matchLabels: {ns: "y"}}}], protocols: [{tcp: {destinationPort: {number: 80}}}]}
                """);
        assertThat(r.observed().connected("y/a", "x/b")).as("across nodes").isFalse();
        assertThat(r.observed().connected("y/b", "x/b")).as("same node").isFalse();
        assertThat(r.observed().connected("y/a", "x/a"))
                .as("the NetworkPolicy still admits y to x/a")
                .isTrue();
        assertThat(r.observed().connected("x/a", "x/b")).isTrue();
    }

    @Test
    void aNodesPeerReachesTheHostNetworkServerAtItsNodesAddress() throws Exception {
        // Egress from x to control-plane nodes is denied, from y it is denied by a NetworkPolicy but an
        // admin Allow to the nodes decides first.
        ProbeResult r = applyAndProbe(anp("x-not-to-control-plane", 30, "x", """
                egress:
                - {action: Deny, to: [{nodes: {matchLabels: {role: control-plane}}}], ports: [{portNumber: {protocol: TCP, port: 80}}]}
                """)
                + anp("y-to-nodes", 31, "y", """
                egress:
                - {action: Allow, to: [{nodes: {}}]}
                """)
                + netpol("y", "no-egress", """
                podSelector: {}
                policyTypes: [Egress]
                """));
        // node-2 is the control plane: its hostNetwork server is closed to x, from node-1 (forwarded) and
        // from node-2 itself (the node's input); node-1's stays open.
        assertThat(r.observed().connected("x/a", "infra/host-2")).isFalse();
        assertThat(r.observed().connected("x/b", "infra/host-2")).isFalse();
        assertThat(r.observed().connected("x/a", "infra/host-1")).isTrue();
        assertThat(r.observed().connected("x/b", "infra/host-1")).isTrue();
        // y may reach every node, whatever its NetworkPolicy says, but no pod.
        assertThat(r.observed().connected("y/a", "infra/host-2")).isTrue();
        assertThat(r.observed().connected("y/b", "infra/host-1")).isTrue();
        assertThat(r.observed().connected("y/a", "x/b")).isFalse();
        // The hostNetwork pods probe too, from their node's address: nothing here limits them.
        assertThat(r.observed().connected("infra/host-2", "x/a")).isTrue();
    }

    static String anp(String name, int priority, String subjectNamespace, String rules) {
        return """
                ---
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata: {name: %s}
                spec:
                  priority: %d
                  subject: {namespaces: {matchLabels: {ns: "%s"}}}
                """.formatted(name, priority, subjectNamespace) + rules.indent(2);
    }

    static String netpol(String namespace, String name, String spec) {
        return "---\n" + NetpolEndToEndTest.policy(namespace, name, spec);
    }

    private ProbeResult applyAndProbe(String policies) throws Exception {
        PolicyProbes.writePolicies(sandbox, manifests, policies);
        ProbeResult r = PolicyProbes.probeAgreeing(sandbox, List.of(TCP80)).get(0);
        assertThat(r.observed().pods()).contains("infra/host-1", "infra/host-2");
        return r;
    }
}
