// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.controlplane.manifests.BadManifests;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The offline tools over deploy/examples/netpol-basic, through picocli as a user runs them. */
class OfflineCommandsTest {
    private static final String EXAMPLE = "../deploy/examples/netpol-basic";

    record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String s) {
        return new KubernetesSerialization().unmarshal(s, Map.class);
    }

    @Test
    @SuppressWarnings("unchecked")
    void matrixJsonHasTheDocumentedShape() {
        Run r = run("matrix", "--manifests", EXAMPLE, "--output", "json");
        assertThat(r.exit()).isZero();
        assertThat(r.out().strip().lines()).as("one JSON object on one line").hasSize(1);
        assertThat(r.out()).startsWith("{\"port\":80,\"protocol\":\"TCP\",\"pods\":[\"x/a\",\"x/b\",\"x/c\",\"y/a\"");
        Map<String, Object> m = json(r.out());
        assertThat(m.keySet()).containsExactly("port", "protocol", "pods", "allowed");
        List<String> pods = (List<String>) m.get("pods");
        assertThat(pods).containsExactly("x/a", "x/b", "x/c", "y/a", "y/b", "y/c", "z/a", "z/b", "z/c");
        Map<String, Map<String, Boolean>> allowed = (Map<String, Map<String, Boolean>>) m.get("allowed");
        assertThat(allowed.keySet()).containsExactlyElementsOf(pods);
        allowed.values().forEach(row -> assertThat(row.keySet()).containsExactlyElementsOf(pods));
        assertThat(allowed.get("y/a").get("x/a")).isTrue(); // ns y -> x/a on serve-80-tcp
        assertThat(allowed.get("z/a").get("x/a")).isFalse(); // default deny in x
        assertThat(allowed.get("x/c").get("x/b")).isTrue(); // x -> x/b
        assertThat(allowed.get("y/a").get("x/b")).isFalse();
        assertThat(allowed.get("y/c").get("x/a")).isTrue(); // y/c egress to x/a 80-81
        assertThat(allowed.get("y/c").get("y/a")).isFalse();
        assertThat(allowed.get("x/a").get("z/b")).isFalse(); // z/b: UDP only
        assertThat(allowed.get("x/a").get("x/a")).isTrue(); // loopback
        assertThat(allowed.get("z/a").get("y/b")).isTrue(); // nothing isolates either side
    }

    @Test
    @SuppressWarnings("unchecked")
    void matrixOfChosenNamespaces() {
        Run r = run("matrix", "--manifests", EXAMPLE, "-n", "y", "-n", "x", "-o", "json");
        assertThat(r.exit()).as(r.err()).isZero();
        Map<String, Object> m = json(r.out());
        assertThat((List<String>) m.get("pods")).containsExactly("x/a", "x/b", "x/c", "y/a", "y/b", "y/c");
        Map<String, Map<String, Boolean>> allowed = (Map<String, Map<String, Boolean>>) m.get("allowed");
        assertThat(allowed.get("y/a").get("x/a")).isTrue(); // the same cells as the whole matrix's
        assertThat(allowed.get("y/a").get("x/b")).isFalse();
        assertThat(allowed.get("x/a")).doesNotContainKey("z/b");
        Run table = run("matrix", "--manifests", EXAMPLE, "--namespace", "z");
        assertThat(table.out().lines().findFirst().orElseThrow())
                .contains("z/a")
                .doesNotContain("x/a");
        Run unknown = run("matrix", "--manifests", EXAMPLE, "-n", "x,nope");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("no pods in namespace nope").contains("x, y, z");
    }

    @Test
    @SuppressWarnings("unchecked")
    void matrixOnUdpAndTable() {
        Map<String, Map<String, Boolean>> allowed = (Map<String, Map<String, Boolean>>)
                json(run("matrix", "--manifests", EXAMPLE, "--protocol", "udp", "--port", "81", "--output", "json")
                                .out())
                        .get("allowed");
        assertThat(allowed.get("x/a").get("z/b")).isTrue();
        assertThat(allowed.get("y/a").get("z/b")).isFalse(); // except 10.244.2.0/24
        assertThat(allowed.get("y/c").get("x/a")).isFalse(); // TCP only egress, and x denies UDP
        Run table = run("matrix", "--manifests", EXAMPLE);
        assertThat(table.exit()).isZero();
        assertThat(table.out().lines().findFirst().orElseThrow())
                .startsWith("80/TCP")
                .contains("x/a")
                .contains("z/c");
        assertThat(table.out()
                        .lines()
                        .filter(l -> l.startsWith("z/a "))
                        .findFirst()
                        .orElseThrow()
                        .split("\\s+")[1])
                .isEqualTo("X");
    }

    @Test
    void explainTextAndJson() {
        Run text = run(
                "explain", "--manifests", EXAMPLE, "--from", "z/a", "--to", "x/a", "--port", "80", "--protocol", "TCP");
        assertThat(text.exit()).as("denied").isEqualTo(1);
        assertThat(text.out()).startsWith("z/a (10.244.3.10) -> x/a (10.244.1.10) 80/TCP: denied");
        assertThat(text.out()).contains("ingress ").contains("isolated");
        Run allowed = run(
                "explain",
                "--manifests",
                EXAMPLE,
                "--from",
                "y/a",
                "--to",
                "10.244.1.10",
                "--port",
                "80",
                "--protocol",
                "tcp",
                "--output",
                "json");
        assertThat(allowed.exit()).isZero();
        Map<String, Object> e = json(allowed.out());
        assertThat(e.get("verdict")).isEqualTo("VERDICT_ALLOW");
        assertThat(allowed.out()).contains("x/allow-a-from-y-web").contains("ingress[0]");
        Run self = run(
                "explain", "--manifests", EXAMPLE, "--from", "x/a", "--to", "x/a", "--port", "81", "--protocol", "TCP");
        assertThat(self.out())
                .startsWith("x/a (10.244.1.10) -> x/a (10.244.1.10) 81/TCP: allowed")
                .contains("loopback");
        assertThat(self.exit()).isZero();
    }

    /** The case: a Pending pod has its address while its init containers run; deny-all covers it. */
    @Test
    void aPendingPodIsJudgedAsThePodItIs(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("cluster.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: a}
                spec: {nodeName: n1, containers: [{name: c}]}
                status: {phase: Pending, podIP: 10.9.1.2}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: y, name: b}
                spec: {nodeName: n1, containers: [{name: c}]}
                status: {phase: Running, podIP: 10.9.1.3}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: y, name: done}
                spec: {nodeName: n1, containers: [{name: c}]}
                status: {phase: Succeeded, podIP: 10.9.1.4}
                ---
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {namespace: x, name: deny-all}
                spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
                """);
        String manifests = dir.toString();
        Run in = run(
                "explain",
                "--manifests",
                manifests,
                "--from",
                "y/b",
                "--to",
                "10.9.1.2",
                "--port",
                "80",
                "--protocol",
                "TCP");
        assertThat(in.out()).startsWith("y/b (10.9.1.3) -> x/a (10.9.1.2) 80/TCP: denied");
        assertThat(in.exit()).isEqualTo(1);
        Run out = run(
                "explain",
                "--manifests",
                manifests,
                "--from",
                "x/a",
                "--to",
                "y/b",
                "--port",
                "80",
                "--protocol",
                "TCP");
        assertThat(out.out()).contains(": denied");
        // A Succeeded pod's address is free for reuse: it is judged as no pod at all.
        Run done = run(
                "explain",
                "--manifests",
                manifests,
                "--from",
                "y/b",
                "--to",
                "10.9.1.4",
                "--port",
                "80",
                "--protocol",
                "TCP");
        assertThat(done.out()).contains(": allowed").contains("not a cluster endpoint");
    }

    @Test
    void fatalUsageErrorsExitNonZeroAndProblemsDoNot() {
        assertThat(run("matrix", "--manifests", "no/such/dir").exit()).isEqualTo(2);
        assertThat(run("matrix").exit()).isEqualTo(2);
        assertThat(run("matrix", "--manifests", EXAMPLE, "--protocol", "ICMP").exit())
                .isEqualTo(2);
        assertThat(run(
                                "explain",
                                "--manifests",
                                EXAMPLE,
                                "--from",
                                "x/nope",
                                "--to",
                                "x/a",
                                "--port",
                                "80",
                                "--protocol",
                                "TCP")
                        .exit())
                .isEqualTo(2);
        Run withProblems = run(
                "matrix",
                "--manifests",
                "src/test/resources/manifests/mixed",
                "--output",
                "json",
                "--assign-ips",
                "10.9.1.0/24");
        assertThat(withProblems.exit()).isZero();
        assertThat(withProblems.err())
                .contains("warning: 02-policies.yaml:1:1 (document 1)")
                .contains("assigned shop/back 10.9.1.1");
        assertThat(json(withProblems.out())).containsKey("allowed");
        Run strict = run("matrix", "--manifests", "src/test/resources/manifests/mixed", "--strict");
        assertThat(strict.exit()).as("--strict: a problem is a failure").isEqualTo(2);
        assertThat(strict.err())
                .contains("error: 02-policies.yaml:1:1 (document 1)")
                .contains("(--strict)");
        assertThat(run("matrix", "--manifests", EXAMPLE, "--strict").exit())
                .as("the example is clean")
                .isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.kubeverdict.controlplane.manifests.BadManifests#underDefaultLimits")
    void unreadableManifestsAreFatalWithFileLineAndColumn(BadManifests.Case bad, @TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: a}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.1}
                """);
        Files.write(dir.resolve(bad.file()), bad.content());
        Run matrix = run("matrix", "--manifests", dir.toString());
        assertThat(matrix.exit()).isEqualTo(2);
        assertThat(matrix.out()).isEmpty();
        assertThat(matrix.err())
                .contains("error: " + bad.where())
                .contains(bad.says())
                .contains("1 error; nothing was evaluated");
        Run explain = run(
                "explain",
                "--manifests",
                dir.toString(),
                "--from",
                "x/a",
                "--to",
                "x/a",
                "--port",
                "80",
                "--protocol",
                "TCP");
        assertThat(explain.exit()).isEqualTo(2);
        assertThat(explain.out()).isEmpty();
        assertThat(explain.err()).contains("error: " + bad.where());
    }

    /** The case: a misspelt kind on a deny-all was ignored with a warning, and matrix showed x open. */
    @Test
    void aMisspeltKindOnADenyAllIsFatalNotAnOpenNamespace(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), TWO_PODS);
        Files.writeString(dir.resolve("deny.yaml"), """
                # x accepts nothing
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicie
                metadata: {namespace: x, name: deny-all}
                spec: {podSelector: {}, policyTypes: [Ingress]}
                """);
        Run matrix = run("matrix", "--manifests", dir.toString());
        assertThat(matrix.exit()).isEqualTo(2);
        assertThat(matrix.out()).isEmpty();
        assertThat(matrix.err())
                .contains("error: deny.yaml:2:1 (document 1): ")
                .contains("\"NetworkPolicie\"")
                .contains("1 error; nothing was evaluated");
        Run explain = run(
                "explain",
                "--manifests",
                dir.toString(),
                "--from",
                "x/a",
                "--to",
                "x/b",
                "--port",
                "80",
                "--protocol",
                "TCP");
        assertThat(explain.exit()).isEqualTo(2);
        assertThat(explain.err()).contains("error: deny.yaml:2:1 (document 1): ");
    }

    @Test
    void otherKindsAreSkippedAndListedOnce(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), TWO_PODS);
        Files.writeString(dir.resolve("app.yaml"), """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {namespace: x, name: web}
                ---
                apiVersion: v1
                kind: Service
                metadata: {namespace: x, name: web}
                """);
        Run matrix = run("matrix", "--manifests", dir.toString(), "--strict");
        assertThat(matrix.exit()).as(matrix.err()).isZero();
        assertThat(matrix.err().lines().filter(l -> l.contains("Deployment") || l.contains("Service")))
                .containsExactly("note: skipped 2 objects of kinds not read: Deployment, Service");
        assertThat(matrix.err()).doesNotContain("warning");
    }

    private static final String TWO_PODS = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: x}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: x, name: a}
            spec: {nodeName: n1, containers: [{name: c, image: i}]}
            status: {phase: Running, podIP: 10.0.0.1}
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: x, name: b}
            spec: {nodeName: n1, containers: [{name: c, image: i}]}
            status: {phase: Running, podIP: 10.0.0.2}
            """;

    @Test
    void runningOutOfMemoryIsAClearMessageAndExitOne(@TempDir Path dir) throws Exception {
        // 24 MiB of manifests cannot be read into a 16 MiB heap.
        StringBuilder pods = new StringBuilder();
        for (int i = 0; pods.length() < 24 * 1024 * 1024; i++) {
            pods.append("---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: x, name: p")
                    .append(i)
                    .append("}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\n");
        }
        Files.writeString(dir.resolve("pods.yaml"), pods);
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(
                        javaBin,
                        "-Xmx16m",
                        "-XX:-UsePerfData",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ControlPlaneMain.class.getName(),
                        "matrix",
                        "--manifests",
                        dir.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isEqualTo(1);
        assertThat(err)
                .contains("not enough memory for the manifests in " + dir)
                .contains("the Java heap is limited to")
                .contains("-Xmx");
    }

    @Test
    void domainNameRulesAreAcceptedAndSaidToDependOnDnsAtRunTime(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: client}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: server}
                spec: {nodeName: n1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.2}
                ---
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata: {name: api-only}
                spec:
                  priority: 1
                  subject: {pods: {namespaceSelector: {}, podSelector: {matchLabels: {}}}}
                  egress:
                  - {action: Allow, to: [{domainNames: ["api.test", "*.svc.test"]}]}
                  - {action: Deny, to: [{networks: ["0.0.0.0/0"]}]}
                """);
        Run explain = run(
                "explain",
                "--manifests",
                dir.toString(),
                "--from",
                "x/client",
                "--to",
                "x/server",
                "--port",
                "443",
                "--protocol",
                "TCP");
        assertThat(explain.exit()).as("denied: " + explain.err()).isEqualTo(1);
        assertThat(explain.err())
                .doesNotContain("warning")
                .contains("note: pod x/client has egress rules to domain names (*.svc.test, api.test): what they allow"
                        + " depends on the DNS answers the pod receives at run time; here they match nothing");
        assertThat(explain.out()).contains(": denied").contains("egress[1]");
        Run matrix = run("matrix", "--manifests", dir.toString(), "--output", "json");
        assertThat(matrix.exit()).isZero();
        assertThat(matrix.err()).contains("note: pod x/server has egress rules to domain names");
    }
}
