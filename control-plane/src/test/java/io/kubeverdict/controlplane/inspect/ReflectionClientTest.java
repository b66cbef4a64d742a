// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A third-party reflection client (npm grpc-js-reflection-client on @grpc/grpc-js, run with Node.js)
 * lists our services over reflection v1alpha and v1 and calls ControlPlaneInspection with no
 * .proto files, against the real calculation over a manifest directory.
 */
class ReflectionClientTest {
    static final Path NODE_DIR = Path.of("src/test/node").toAbsolutePath();

    static final String MANIFESTS = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: x, name: a, labels: {app: a}}
            spec: {nodeName: n1, containers: [{name: c, image: i, ports: [{name: http, containerPort: 80}]}]}
            status: {phase: Running, podIP: 10.0.0.1}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: x, name: b, labels: {app: b}}
            spec: {nodeName: n2, containers: [{name: c, image: i}]}
            status: {phase: Running, podIP: 10.0.0.2}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: x, name: c, labels: {app: c}}
            spec: {nodeName: n2, containers: [{name: c, image: i}]}
            status: {phase: Running, podIP: 10.0.0.3}
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {namespace: x, name: allow-b}
            spec:
              podSelector: {matchLabels: {app: a}}
              ingress: [{from: [{podSelector: {matchLabels: {app: b}}}], ports: [{port: http}]}]
            """;

    @Test
    void nodeReflectionClientListsServicesAndCallsInspection(@TempDir Path dir) throws Exception {
        ensureNodeModules();
        Files.writeString(dir.resolve("cluster.yaml"), MANIFESTS);
        try (ControlPlane cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(dir, new EngineDirectoryReader()))) {
            cp.firstCalculation().get(60, TimeUnit.SECONDS);
            String target = "127.0.0.1:" + cp.grpcPort();

            JsonObject allowed = run(target, "n1", "x/b", "x/a", 80);
            for (String version : List.of("v1alpha", "v1")) {
                assertThat(allowed.getAsJsonObject(version)
                                .getAsJsonArray("services")
                                .toString())
                        .contains(
                                "kubeverdict.v1.ControlPlaneInspection",
                                "kubeverdict.v1.PolicySync",
                                "grpc.health.v1.Health",
                                "grpc.reflection.v1.ServerReflection",
                                "grpc.reflection.v1alpha.ServerReflection");
            }
            assertThat(allowed.getAsJsonObject("listNodes").toString()).contains("\"n1\"", "\"n2\"");
            assertThat(allowed.getAsJsonObject("snapshot")
                            .getAsJsonArray("endpoints")
                            .toString())
                    .contains("\"pod\":\"a\"")
                    .doesNotContain("\"pod\":\"b\"");
            JsonObject ex = allowed.getAsJsonObject("explain");
            assertThat(ex.get("verdict").getAsString()).isEqualTo("VERDICT_ALLOW");
            assertThat(ex.getAsJsonObject("ingress").get("rule_id").getAsString())
                    .isEqualTo("ingress[0]");
            assertThat(ex.getAsJsonObject("ingress")
                            .getAsJsonObject("policy")
                            .get("name")
                            .getAsString())
                    .isEqualTo("x/allow-b");

            JsonObject denied = run(target, "n1", "x/c", "x/a", 80).getAsJsonObject("explain");
            assertThat(denied.get("verdict").getAsString()).isEqualTo("VERDICT_DENY");
            assertThat(denied.getAsJsonObject("ingress").get("isolated").getAsBoolean())
                    .isTrue();
            assertThat(denied.getAsJsonObject("egress").get("verdict").getAsString())
                    .isEqualTo("VERDICT_ALLOW");
        }
    }

    private static JsonObject run(String target, String node, String from, String to, int port) throws Exception {
        File out = File.createTempFile("reflection", ".json");
        File err = File.createTempFile("reflection", ".err");
        try {
            Process p = new ProcessBuilder("node", "reflection-check.js", target, node, from, to, String.valueOf(port))
                    .directory(NODE_DIR.toFile())
                    .redirectOutput(out)
                    .redirectError(err)
                    .start();
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
            assertThat(p.exitValue())
                    .as("node failed: " + Files.readString(err.toPath()))
                    .isZero();
            return JsonParser.parseString(Files.readString(out.toPath(), StandardCharsets.UTF_8))
                    .getAsJsonObject();
        } finally {
            out.delete();
            err.delete();
        }
    }

    /** node_modules is not committed: install exactly the locked versions once (scripts/setup.sh does it too). */
    static void ensureNodeModules() throws Exception {
        if (Files.isDirectory(NODE_DIR.resolve("node_modules/grpc-js-reflection-client"))) {
            return;
        }
        Process p = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund")
                .directory(NODE_DIR.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("npm ci finished").isTrue();
        assertThat(p.exitValue()).as("npm ci in " + NODE_DIR).isZero();
    }
}
