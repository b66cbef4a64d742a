// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.ServePort;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every pod serves its own ports and every probed port, whatever port; hostNetwork pods at their node's address. */
class BedPlanTest {
    private static final String CLUSTER = """
            apiVersion: v1
            kind: Node
            metadata: {name: w1}
            status: {addresses: [{type: InternalIP, address: 10.5.0.1}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: n, name: web}
            spec: {nodeName: w1, containers: [{name: c, ports: [{containerPort: 8080}]}]}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: n, name: host}
            spec: {nodeName: w1, hostNetwork: true, containers: [{name: c}]}
            """;

    private static List<PodSpec> plan(List<ServePort> probes) throws Exception {
        LoadedManifests m = new ManifestLoader().loadText("c.yaml", CLUSTER);
        Placement placement = Placement.of(m.pods(), m.nodes(), 2, Placement.DEFAULT_POD_CIDR);
        List<SandboxPod> pods = m.pods().stream().map(SandboxPod::of).toList();
        SandboxOptions options = new SandboxOptions(
                java.nio.file.Path.of("."),
                2,
                probes,
                Placement.DEFAULT_POD_CIDR,
                java.time.Duration.ofSeconds(1),
                "kvt-");
        return BedPlan.pods(pods, placement, options.targets(pods));
    }

    @Test
    void anyProbedPortIsServedByEveryPodHostNetworkOnesAtTheirNodesAddress() throws Exception {
        List<PodSpec> specs = plan(List.of(ServePort.parse("2379/TCP"), ServePort.parse("5353/UDP")));
        PodSpec web =
                specs.stream().filter(p -> p.name().equals("n/web")).findFirst().orElseThrow();
        PodSpec host = specs.stream()
                .filter(p -> p.name().equals("n/host"))
                .findFirst()
                .orElseThrow();
        assertThat(web.ports())
                .containsExactly(ServePort.parse("8080/TCP"), ServePort.parse("2379/TCP"), ServePort.parse("5353/UDP"));
        assertThat(web.hostNetwork()).isFalse();
        assertThat(host.hostNetwork()).isTrue();
        assertThat(host.ips()).containsExactly(PodSpec.address("10.5.0.1"));
        assertThat(host.ports()).containsExactly(ServePort.parse("2379/TCP"), ServePort.parse("5353/UDP"));
    }

    @Test
    void aHostNetworkPodCannotServeTheAgentsPorts() {
        assertThatThrownBy(() -> plan(List.of(ServePort.parse(SandboxProcesses.AGENT_INSPECT_PORT + "/TCP"))))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("n/host")
                .hasMessageContaining("agent");
    }
}
