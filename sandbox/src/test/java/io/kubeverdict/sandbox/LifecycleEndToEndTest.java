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
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A pod's whole life on real packets, with the nodes' pod ranges given (so every agent runs the
 * pod address guard): a Pending pod has its address while its init containers and sidecars run,
 * and a deny-all covers it exactly as a Running one; a Succeeded pod's address is no pod's. Every
 * ordered pair is probed and compared with the engine, which holds the same meaning.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class LifecycleEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");

    static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: "y"}
            ---
            apiVersion: v1
            kind: Node
            metadata: {name: node-1}
            spec: {podCIDRs: [10.244.1.0/24]}
            ---
            apiVersion: v1
            kind: Node
            metadata: {name: node-2}
            spec: {podCIDRs: [10.244.2.0/24]}
            """ + pod("x", "a", "node-1", "10.244.1.10", "Running")
            + pod("x", "starting", "node-1", "10.244.1.11", "Pending")
            + pod("x", "done", "node-1", "10.244.1.12", "Succeeded") + pod("y", "a", "node-2", "10.244.2.10", "Running")
            + pod("y", "b", "node-1", "10.244.1.20", "Running");

    static String pod(String namespace, String name, String node, String ip, String phase) {
        return """
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: "%s", name: %s, labels: {pod: %s}}
                spec: {nodeName: %s, containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}
                status: {phase: %s, podIPs: [{ip: %s}]}
                """.formatted(namespace, name, name, node, phase, ip);
    }

    private Path manifests;
    private Sandbox sandbox;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-life-");
        Files.writeString(manifests.resolve("cluster.yaml"), CLUSTER);
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sb-"),
                new Progress(new java.io.PrintWriter(System.err, true)));
        assertThat(sandbox.placement().nodeOf())
                .as("the Pending pod runs; the Succeeded one does not")
                .containsKeys("x/starting")
                .doesNotContainKey("x/done");
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
    void aDenyAllCoversAPendingPodInBothDirections() throws Exception {
        ProbeResult r = applyAndProbe("---\n" + NetpolEndToEndTest.policy("x", "deny-all", """
                podSelector: {}
                policyTypes: [Ingress, Egress]
                """));
        assertThat(r.observed().connected("y/a", "x/starting"))
                .as("to the Pending pod, across nodes")
                .isFalse();
        assertThat(r.observed().connected("y/b", "x/starting"))
                .as("to the Pending pod, same node")
                .isFalse();
        assertThat(r.observed().connected("x/starting", "y/a"))
                .as("from the Pending pod")
                .isFalse();
        assertThat(r.observed().connected("y/a", "y/b"))
                .as("unselected pods stay free, guard on")
                .isTrue();
        assertThat(r.observed().connected("y/b", "y/a")).isTrue();
        // The Succeeded pod's address is no endpoint: the engine judges it as no pod.
        assertThat(sandbox.expectedCluster()
                        .explain("10.244.2.10", "10.244.1.12", 6, 80)
                        .getIngress()
                        .getEvaluated())
                .as("no endpoint there to evaluate")
                .isFalse();
        assertThat(sandbox.expectedCluster()
                        .explain("10.244.2.10", "10.244.1.11", 6, 80)
                        .getIngress()
                        .getEvaluated())
                .as("the Pending pod is evaluated")
                .isTrue();
    }

    private ProbeResult applyAndProbe(String policies) throws Exception {
        PolicyProbes.writePolicies(sandbox, manifests, policies);
        return PolicyProbes.probeAgreeing(sandbox, List.of(TCP80)).get(0);
    }
}
