// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The flow history recorded from real packets (netpol-basic in the sandbox, every pair probed on
 * TCP 80), then read back the way a user does, with CLI processes against the real control plane:
 * `whatif` on a change that denies one recorded flow names exactly that flow; `recommend` for
 * namespace x, applied in place of x's policies, keeps every recorded allowed pair allowed and
 * denies every other pair with a pod of x (real packets again).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EndToEndTest
class FlowHistoryEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    private static final Path EXAMPLE = Path.of("../deploy/examples/netpol-basic");

    private Path manifests;
    private Path work;
    private Sandbox sandbox;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-flows-");
        work = Files.createTempDirectory("kvt-e2e-flows-work-");
        for (String f : List.of("namespaces.yaml", "pods.yaml", "policies.yaml")) {
            Files.copy(EXAMPLE.resolve(f), manifests.resolve(f));
        }
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sf-"),
                new Progress(new java.io.PrintWriter(System.err, true)));
    }

    @AfterAll
    void stop() throws Exception {
        if (sandbox != null) {
            sandbox.close();
        }
        for (Path dir : List.of(manifests, work)) {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    record Run(int exit, String out, String err) {}

    private Run cli(String subcommand, String... args) throws Exception {
        Path out = Files.createTempFile(work, "cli-", ".out");
        Path err = Files.createTempFile(work, "cli-", ".err");
        Process p = new ProcessBuilder(sandbox.cliCommand(subcommand, args))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        assertThat(p.waitFor(180, TimeUnit.SECONDS)).as(subcommand + " ended").isTrue();
        return new Run(
                p.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** "x/a x/b" for each recorded flow with this verdict (last pods: one pod per workload here). */
    private static Set<String> pairs(ListFlowsResponse flows, Verdict verdict) {
        Set<String> out = new TreeSet<>();
        for (FlowRecord f : flows.getFlowsList()) {
            if (f.getVerdict() == verdict && f.getPort() == 80 && f.getProtocol() == 6) {
                out.add(f.getSource().getLastPod() + " " + f.getDestination().getLastPod());
            }
        }
        return out;
    }

    /** Waits until the history holds the flows the probes made and stops growing. */
    private ListFlowsResponse recorded() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        int last = -1;
        while (true) {
            ListFlowsResponse now = sandbox.inspection().flows();
            Set<String> allowed = pairs(now, Verdict.VERDICT_ALLOW);
            if (allowed.contains("x/c x/b") && allowed.contains("y/a x/a") && now.getFlowsCount() == last) {
                return now;
            }
            assertThat(System.nanoTime() - deadline)
                    .as("the history records the probes: " + now.getFlowsList())
                    .isNegative();
            last = now.getFlowsCount();
            Thread.sleep(3000);
        }
    }

    @Test
    void whatifNamesTheOneFlowAChangeDeniesAndRecommendedPoliciesKeepExactlyWhatWasSeen() throws Exception {
        assertThat(sandbox.probe(List.of(TCP80)))
                .allSatisfy(r -> assertThat(r.mismatches()).isEmpty());
        ListFlowsResponse history = recorded();
        Set<String> allowedSeen = pairs(history, Verdict.VERDICT_ALLOW);
        assertThat(pairs(history, Verdict.VERDICT_DENY)).contains("z/a x/a").doesNotContain("x/c x/b");

        Run flows = cli("flows", "-o", "json", "--limit", "100000");
        assertThat(flows.exit()).as(flows.err()).isZero();
        Path flowsFile = Files.writeString(work.resolve("flows.json"), flows.out());

        // A proposed change: x/b accepts x/a only (it accepted every pod of x).
        Path proposed = Files.createDirectories(work.resolve("proposed"));
        try (Stream<Path> files = Files.list(sandbox.assignedManifests())) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.copy(f, proposed.resolve(f.getFileName()));
            }
        }
        Path policies = proposed.resolve("policies.yaml");
        String narrowed = Files.readString(policies)
                .replace(
                        "    matchLabels: {pod: b}\n  ingress:\n    - from:\n        - podSelector: {}",
                        "    matchLabels: {pod: b}\n  ingress:\n    - from:\n        - podSelector:\n"
                                + "            matchLabels: {pod: a}");
        assertThat(narrowed).isNotEqualTo(Files.readString(policies));
        Files.writeString(policies, narrowed);
        Run whatif = cli("whatif", "--manifests", proposed.toString(), "--flows", flowsFile.toString());
        assertThat(whatif.exit()).as(whatif.out() + whatif.err()).isEqualTo(1);
        List<String> rows = whatif.out().lines().toList();
        assertThat(rows).as(whatif.out()).hasSize(3);
        assertThat(rows.get(1)).contains("x/c", "x/b", "80/TCP", "allowed (ingress x/allow-b-from-x", "denied");

        Run recommend = cli(
                "recommend",
                "--namespace",
                "x",
                "--enforced",
                "--manifests",
                sandbox.assignedManifests().toString(),
                "--flows",
                flowsFile.toString());
        assertThat(recommend.exit()).as(recommend.err()).isZero();
        // In place of x's policies: the example's y and z policies, and the recommended ones.
        String original = Files.readString(manifests.resolve("policies.yaml"));
        String others = original.substring(original.indexOf("# y/c may only talk to x/a"));
        Files.writeString(manifests.resolve("policies.yaml"), others + "\n" + recommend.out());
        assertThat(sandbox.reload()).isTrue();
        List<ProbeResult> after = sandbox.probe(List.of(TCP80));
        assertThat(after).allSatisfy(r -> assertThat(r.mismatches()).isEmpty());
        var observed = after.get(0).observed();
        int checked = 0;
        for (String from : observed.pods()) {
            for (String to : observed.pods()) {
                if (from.equals(to) || !(from.startsWith("x/") || to.startsWith("x/"))) {
                    continue;
                }
                assertThat(observed.connected(from, to))
                        .as(from + " -> " + to + " (recorded allowed: " + allowedSeen + ")")
                        .isEqualTo(allowedSeen.contains(from + " " + to));
                checked++;
            }
        }
        assertThat(checked).isEqualTo(3 * 8 * 2 - 6);
    }
}
