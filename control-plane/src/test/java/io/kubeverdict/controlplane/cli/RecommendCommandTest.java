// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `kube-verdict recommend` on netpol-basic: applied in place of namespace x's policies, the
 * recommended ones keep every observed allowed pair allowed and deny every pair with a pod of x
 * that was never seen.
 */
class RecommendCommandTest {
    private static final List<ExampleHistory.Connection> SEEN = List.of(
            new ExampleHistory.Connection("10.244.2.10", "10.244.1.10", 6, 80), // y/a -> x/a
            new ExampleHistory.Connection("10.244.3.10", "10.244.1.10", 6, 80), // z/a -> x/a (denied)
            new ExampleHistory.Connection("10.244.1.10", "10.244.1.11", 6, 80), // x/a -> x/b
            new ExampleHistory.Connection("10.244.1.12", "10.244.1.11", 6, 81), // x/c -> x/b
            new ExampleHistory.Connection("10.244.1.10", "203.0.113.7", 6, 443), // x/a -> outside
            new ExampleHistory.Connection("10.244.1.11", "10.244.2.11", 6, 80)); // x/b -> y/b

    @TempDir
    Path dir;

    private LiveCommandsTest.Run recommend(String... more) throws Exception {
        Path flows = ExampleHistory.write(dir.resolve("flows.json"), SEEN);
        List<String> args = new ArrayList<>(List.of(
                "recommend", "--namespace", "x", "--manifests", FlowsCommandTest.EXAMPLE, "--flows", flows.toString()));
        args.addAll(List.of(more));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args.toArray(String[]::new));
        return new LiveCommandsTest.Run(exit, out.toString(), err.toString());
    }

    @Test
    void theYamlIsStagedUsesNamedPortsAndCidrsOnlyOutsideTheCluster() throws Exception {
        var run = recommend();
        assertThat(run.exit()).as(run.err()).isZero();
        String yaml = run.out();
        assertThat(yaml).contains("name: recommended-a", "name: recommended-b", "name: recommended-c");
        assertThat(yaml).contains("kube-verdict.io/staged: \"true\"");
        assertThat(yaml).contains("port: serve-80-tcp", "port: serve-81-tcp");
        assertThat(yaml).contains("cidr: 203.0.113.7/32").doesNotContain("10.244.");
        assertThat(yaml).contains("kubernetes.io/metadata.name: \"y\"");
        assertThat(yaml).doesNotContain("\"z\""); // the denied flow from z is not allowed
    }

    @Test
    void appliedTheyKeepSeenPairsAllowedAndDenyPairsNeverSeen() throws Exception {
        var run = recommend("--enforced");
        assertThat(run.exit()).as(run.err()).isZero();
        LoadedManifests example = new ManifestLoader().load(Path.of(FlowsCommandTest.EXAMPLE));
        List<NetworkPolicy> policies = new ArrayList<>(example.policies().stream()
                .filter(p -> !p.getMetadata().getNamespace().equals("x"))
                .toList());
        policies.addAll(new ManifestLoader().loadText("r.yaml", run.out()).policies());
        OfflineCluster applied = new OfflineCluster(new ClusterObjects(
                example.namespaces(), example.pods(), policies, example.adminPolicies(), example.nodes()));
        Set<String> allowedSeen = new HashSet<>(List.of("y/a x/a 80", "x/a x/b 80", "x/c x/b 81", "x/b y/b 80"));
        int checked = 0;
        for (var src : applied.members()) {
            for (var dst : applied.members()) {
                boolean involvesX = src.key().startsWith("x/") || dst.key().startsWith("x/");
                if (!involvesX || src.key().equals(dst.key())) {
                    continue;
                }
                for (int port : new int[] {80, 81}) {
                    boolean seen = allowedSeen.contains(src.key() + " " + dst.key() + " " + port);
                    assertThat(applied.allowed(src, dst, 6, port))
                            .as(src.key() + " -> " + dst.key() + " " + port)
                            .isEqualTo(seen);
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThan(50);
        assertThat(applied.allowed("10.244.1.10", "203.0.113.7", 6, 443)).isTrue();
        assertThat(applied.allowed("10.244.1.10", "203.0.113.8", 6, 443)).isFalse();
    }

    @Test
    void withoutManifestsItSaysWhatItNeeds() throws Exception {
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(err))
                .execute("recommend", "--namespace", "x", "--flows", "nope.json");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--manifests DIR");
    }
}
