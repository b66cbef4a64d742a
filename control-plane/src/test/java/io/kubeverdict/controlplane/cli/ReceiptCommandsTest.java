// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.receipts.ReportingAgent;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.source.ManifestDirectorySource;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code status --policies}, {@code status KIND/NS/NAME} and {@code wait --for=enforced} against a
 * real control plane over gRPC (the real calculation on a copy of deploy/examples/netpol-basic),
 * with agents played by the test: each reads its stream and reports applied only when told to.
 * x/default-deny-ingress selects x/a, x/c (node-1) and x/b (node-2).
 */
class ReceiptCommandsTest {
    private static final String EXAMPLE = "../deploy/examples/netpol-basic";
    private static final String DENY = "networkpolicy/x/default-deny-ingress";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    private ControlPlane cp;
    private ManagedChannel channel;
    private final List<ReportingAgent> agents = new ArrayList<>();

    record Run(int exit, String out, String err) {}

    @BeforeEach
    void start() throws Exception {
        for (String f : List.of("namespaces.yaml", "pods.yaml", "policies.yaml")) {
            Files.copy(Path.of(EXAMPLE, f), dir.resolve(f));
        }
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(
                        dir,
                        new EngineDirectoryReader(),
                        new ManifestDirectorySource.Timing(
                                Duration.ofMillis(50), Duration.ofSeconds(30), Duration.ofMillis(100))));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        agents.forEach(ReportingAgent::close);
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cp.close();
    }

    private Run live(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--control-plane");
        all.add("127.0.0.1:" + cp.grpcPort());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    /** Waits (generously) for a condition. */
    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end)
                    .as("condition not met within 60 s")
                    .isNegative();
            Thread.sleep(20);
        }
    }

    private ReportingAgent connected(String node) throws InterruptedException {
        ReportingAgent a = ReportingAgent.connect(channel, node);
        agents.add(a);
        return a;
    }

    private JsonNode receipt(String policy) {
        Run r = live("status", policy, "-o", "json");
        JsonNode all = JSON.readTree(r.out());
        return all.path("receipts").path(0);
    }

    /** Rewrites the policy with another ingress peer (a new generation that changes both nodes' snapshots). */
    private void writeDeny(String version) throws Exception {
        String before = receipt(DENY).path("written").asText();
        Path policies = dir.resolve("policies.yaml");
        String text = Files.readString(policies);
        int at = text.indexOf("  name: default-deny-ingress\nspec:\n");
        int end = text.indexOf("---", at);
        String spec = "  name: default-deny-ingress\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n"
                + "  ingress:\n    - from:\n        - podSelector:\n            matchLabels: {v: \"" + version
                + "\"}\n";
        Files.writeString(policies, text.substring(0, at) + spec + text.substring(end));
        await(() -> !receipt(DENY).path("written").asText().equals(before));
    }

    @Test
    void waitReturnsOnceEveryNodeAppliedAndNamesTheOneThatDidNot() throws Exception {
        ReportingAgent one = connected("node-1");
        ReportingAgent two = connected("node-2");

        Run lagging = live("wait", "--for=enforced", DENY, "--timeout=3s");
        assertThat(lagging.exit()).as(lagging.err()).isEqualTo(1);
        assertThat(lagging.err())
                .contains("timed out")
                .contains(DENY + ": enforced on 0 of 2 nodes")
                .contains("node-1")
                .contains("node-2");

        one.apply(0);
        Run half = live("wait", "--for=enforced", DENY, "--timeout=3s");
        assertThat(half.exit()).isEqualTo(1);
        assertThat(half.err()).contains("enforced on 1 of 2 nodes").contains("lagging: node-2");

        CompletableFuture<Run> waiting = CompletableFuture.supplyAsync(
                () -> live("wait", "--for=enforced", DENY, "networkpolicy/x/allow-b-from-x", "--timeout=60s"));
        Thread.sleep(500);
        assertThat(waiting).isNotDone();
        two.apply(0);
        Run done = waiting.get(60, TimeUnit.SECONDS);
        assertThat(done.exit()).as(done.err()).isZero();
        assertThat(done.out())
                .contains(DENY + " enforced on 2/2 nodes")
                .contains("networkpolicy/x/allow-b-from-x enforced on 1/1 nodes");
    }

    @Test
    void aGenerationWrittenWhileWaitingIsWaitedFor() throws Exception {
        ReportingAgent one = connected("node-1");
        ReportingAgent two = connected("node-2");
        one.apply(0);
        two.apply(0);
        assertThat(live("wait", "--for=enforced", DENY, "--timeout=10s").exit()).isZero();

        writeDeny("2");
        await(() -> one.received() >= 2 && two.received() >= 2);
        CompletableFuture<Run> waiting =
                CompletableFuture.supplyAsync(() -> live("wait", "--for=enforced", DENY, "--timeout=60s"));
        writeDeny("3");
        await(() -> one.received() >= 3 && two.received() >= 3);
        one.apply(1); // generation 2 only
        two.apply(1);
        Thread.sleep(500);
        assertThat(waiting).isNotDone();
        one.applyAll();
        two.applyAll();
        Run done = waiting.get(60, TimeUnit.SECONDS);
        assertThat(done.exit()).as(done.err()).isZero();
    }

    @Test
    void statusShowsEveryPolicyAndOneWithItsNodes() throws Exception {
        ReportingAgent one = connected("node-1");
        connected("node-2");
        one.apply(0);

        Run all = live("status", "--policies");
        assertThat(all.exit()).as(all.err()).isEqualTo(1);
        List<String> lines = all.out().lines().toList();
        assertThat(lines.get(0)).startsWith("POLICY ").contains("GENERATION", "NODES", "STATE", "LATENCY", "LAGGING");
        assertThat(lines)
                .anySatisfy(l -> assertThat(l)
                        .startsWith(DENY)
                        .contains("1/2")
                        .contains("lagging")
                        .contains("node-2"));
        assertThat(all.err()).contains("not enforced on every node");

        Run one1 = live("status", DENY);
        assertThat(one1.exit()).isEqualTo(1);
        assertThat(one1.out())
                .contains(DENY + ": lagging on 1 of 2 nodes")
                .containsPattern("node-2 +lagging")
                .containsPattern("node-1 +enforced");

        JsonNode json = JSON.readTree(live("status", "--policies", "-o", "json").out());
        assertThat(json.path("receipts").size()).isEqualTo(5);
        Run yaml = live("status", "--policies", "-o", "yaml");
        assertThat(yaml.out()).contains("kind: networkpolicy").contains("enforcedNodes: 1");

        Run unknown = live("status", "networkpolicy/x/nope");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.out()).contains("networkpolicy/x/nope: not known to the control plane");
        Run bad = live("status", "networkpolicy/nope");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("NAMESPACE/NAME");
    }

    @Test
    void aDeletedPolicysReceiptDisappears() throws Exception {
        assertThat(receipt(DENY).path("kind").asText()).isEqualTo("networkpolicy");
        Path policies = dir.resolve("policies.yaml");
        String text = Files.readString(policies);
        int at = text.indexOf("apiVersion", text.indexOf("# Namespace x accepts nothing"));
        int end = text.indexOf("---", at) + 4;
        Files.writeString(policies, text.substring(0, at) + text.substring(end));
        await(() -> live("status", DENY).out().contains("not known to the control plane"));
        Run waited = live("wait", "--for=enforced", DENY, "--timeout=3s");
        assertThat(waited.exit()).isEqualTo(1);
        assertThat(waited.err()).contains(DENY + ": not known to the control plane");
    }

    @Test
    void waitRefusesWhatItCannotWaitFor() {
        Run cond = live("wait", "--for=ready", DENY);
        assertThat(cond.exit()).isEqualTo(2);
        Run bad = live("wait", "--for=enforced", "pod/x/a");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("unknown kind");
        Run absent = live("wait", "--for=enforced", DENY, "--timeout=1s", "--control-plane", "127.0.0.1:1");
        assertThat(absent.exit()).isIn(2, 3);
    }

    @Test
    void statusSaysSoAndExitsOneWhenTheLatestManifestLoadWasRejected() throws Exception {
        for (String node : List.of("node-1", "node-2")) {
            ReportingAgent a = connected(node);
            a.awaitReceived(1);
            a.applyAll();
        }
        await(() -> live("status").exit() == 0);

        Files.writeString(dir.resolve("broken.yaml"), "kind: NetworkPolicy\nmetadata: {name: [unclosed\n");
        await(() -> live("status").exit() == 1);
        Run rejected = live("status");
        assertThat(rejected.out()).contains("in-sync").contains("NOT APPLIED").contains("broken.yaml");
        assertThat(rejected.err()).contains("not applied").contains("broken.yaml");
        assertThat(JSON.readTree(live("status", "-o", "json").out())
                        .path("sourceProblem")
                        .asText())
                .contains("broken.yaml");

        Files.delete(dir.resolve("broken.yaml"));
        await(() -> live("status").exit() == 0);
    }
}
