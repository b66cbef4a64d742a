// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static io.kubeverdict.sandbox.FaultBed.NODE1;
import static io.kubeverdict.sandbox.FaultBed.NODE2;
import static io.kubeverdict.sandbox.FaultBed.policy;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testing.tier.EndToEndTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Bad manifests on real packets (issue 15, items 1–3): the inputs that used to drop a policy or
 * publish an empty cluster, written into the directory the control plane watches, after a good
 * load and at a start, while a {@link ContinuousProber} checks every pair the whole time. What
 * cannot be read rejects the whole load: the pods keep seeing the last good state (at a start:
 * nothing is published and no agent is told it is in sync), and the revision of the bad
 * directory is never published. What reads now (a NetworkPolicyList, a document over 3 MiB) is
 * enforced.
 */
@EndToEndTest
@ExtendWith(FaultBed.Resolver.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ManifestFaultTest {
    static final String LOAD_ERRORS = "kubeverdict_manifest_load_errors_total";
    static final String LOAD_OK = "kubeverdict_manifest_load_ok";
    static final Duration SIGNAL_TIMEOUT = Duration.ofSeconds(60);
    static final Duration HOLD = Duration.ofSeconds(60);

    /** The good state: y's policy in YAML, x's in JSON (so a JSON file can go bad too). */
    static final String Y_POLICY = policy("y", "b-from-x", """
            podSelector: {matchLabels: {pod: b}}
            ingress:
            - from:
              - namespaceSelector: {matchLabels: {ns: x}}
            """);

    static final String X_POLICY_JSON = """
            {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
             "metadata": {"namespace": "x", "name": "deny-ingress"},
             "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}
            """;
    static final String Z_DENY = policy("z", "deny-ingress", """
            podSelector: {}
            policyTypes: [Ingress]
            """);

    private FaultBed bed;
    private Sandbox sandbox;

    @BeforeAll
    void useTheBed(FaultBed bed) {
        this.bed = bed;
        this.sandbox = bed.sandbox;
    }

    @AfterEach
    void recover() throws Exception {
        bed.recover();
    }

    /** The other tests of the bed keep their policies in policies.yaml alone. */
    @AfterAll
    void removeTheJsonPolicy() throws Exception {
        if (bed != null) {
            Files.deleteIfExists(bed.manifests.resolve("policies.json"));
            bed.recover();
        }
    }

    /** A bad version of one file of the good state: its name and bytes. */
    record Bad(String what, String file, byte[] bytes) {
        static Bad text(String what, String file, String text) {
            return new Bad(what, file, text.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String toString() {
            return what;
        }
    }

    /**
     * Each replaces the file holding a policy with one that cannot be read: a loader that dropped
     * the document (or kept the rest of a List) would open the pods that policy isolates.
     */
    static List<Bad> unreadable() {
        byte[] latin1 = ("# caf\u00e9 in ISO-8859-1, not UTF-8\n" + Y_POLICY).getBytes(StandardCharsets.ISO_8859_1);
        StringBuilder deep = new StringBuilder(Y_POLICY).append("---\nkind: ConfigMap\ndata: ");
        deep.append("[".repeat(20_000)).append("]".repeat(20_000)).append('\n');
        return List.of(
                new Bad("a byte that is not UTF-8", "policies.yaml", latin1),
                Bad.text(
                        "a YAML syntax error",
                        "policies.yaml",
                        Y_POLICY.replace("{matchLabels: {pod: b}}", "{matchLabels: {pod: b}")),
                Bad.text(
                        "tab indentation",
                        "policies.yaml",
                        Y_POLICY.replace("\n  name: b-from-x", "\n\tname: b-from-x")),
                Bad.text("an unterminated quote", "policies.yaml", Y_POLICY.replace("namespace: y", "namespace: \"y")),
                Bad.text(
                        "a duplicate key",
                        "policies.yaml",
                        Y_POLICY.replace("spec:\n", "spec:\n  podSelector: {matchLabels: {pod: nobody}}\n")),
                Bad.text(
                        "a trailing comma in JSON",
                        "policies.json",
                        X_POLICY_JSON.replace("[\"Ingress\"]}}", "[\"Ingress\"],}}")),
                Bad.text(
                        "a v1 List with one bad item",
                        "policies.yaml",
                        "apiVersion: v1\nkind: List\nitems:\n"
                                + "- " + Y_POLICY.indent(2).substring(2)
                                + "- apiVersion: networking.k8s.io/v1\n  kind: NetworkPolicy\n  metadata: {namespace: z, name: broken}\n  spec: 5\n"),
                new Bad(
                        "a document nested 20000 deep",
                        "policies.yaml",
                        deep.toString().getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    @Order(1)
    void unreadableInputAfterAGoodLoadKeepsTheLastGoodStateOnPackets() throws Exception {
        EnforcementModel model = converge(Y_POLICY, X_POLICY_JSON);
        Verdicts good = model.enforced("the good load enforced");
        String goodRevision = sandbox.revision();
        ExpectationTimeline timeline = new ExpectationTimeline(good.name(), good);
        try (ContinuousProber prober = bed.prober(timeline, good)) {
            prober.awaitWholeRounds(0, 1, HOLD);
            for (Bad bad : unreadable()) {
                Path file = sandbox.assignedManifests().resolve(bad.file());
                byte[] before = Files.readAllBytes(file);
                double errors = bed.controlPlaneMetric(LOAD_ERRORS);
                replace(file, bad.bytes());
                awaitMetric(
                        bad + ": the control plane rejects the load",
                        () -> bed.controlPlaneMetric(LOAD_ERRORS),
                        v -> v > (Double.isNaN(errors) ? 0 : errors));
                assertThat(bed.controlPlaneMetric(LOAD_OK))
                        .as(bad + ": load_ok")
                        .isZero();
                assertThat(bed.controlPlaneHttp("/readyz").status())
                        .as(bad + ": readiness")
                        .isNotEqualTo(200);
                int epoch = timeline.enter(bad + ": the good load stays", good);
                prober.awaitWholeRounds(epoch, 1, HOLD);
                assertThat(sandbox.inspection().listNodes().getSourceRevision())
                        .as(bad + ": published revision")
                        .isEqualTo(goodRevision);

                replace(file, before);
                awaitMetric(bad + ": the directory loads again", () -> bed.controlPlaneMetric(LOAD_OK), v -> v == 1);
                assertThat(bed.controlPlaneHttp("/readyz").status())
                        .as(bad + ": ready again")
                        .isEqualTo(200);
            }
            // The watcher still follows: a change after all that is enforced.
            Files.deleteIfExists(bed.manifests.resolve("policies.json"));
            EnforcementModel after = bed.stage(Y_POLICY + "---\n" + Z_DENY);
            Verdicts changed = after.enforced("y and z policies enforced");
            assertThat(good.differences(changed)).isNotEmpty();
            timeline.enter("a good change: converging", good, changed);
            sandbox.publish();
            sandbox.awaitConverged();
            int last = timeline.enter(changed.name(), changed);
            prober.awaitWholeRounds(last, 1, HOLD);
            bed.report(
                    "bad manifests after a good load: %d inputs rejected, 0 wrong verdicts over %d rounds",
                    unreadable().size(), prober.rounds());
            assertThat(prober.wrongVerdicts()).as("wrong verdicts").isEmpty();
        }
    }

    @Test
    @Order(2)
    void whatReadsNowIsEnforced() throws Exception {
        EnforcementModel base = converge(Y_POLICY, X_POLICY_JSON);
        Verdicts good = base.enforced("the good load enforced");
        String list = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicyList\nitems:\n" + "- "
                + Y_POLICY.indent(2).substring(2) + "- " + Z_DENY.indent(2).substring(2);
        String huge = Y_POLICY + "---\n"
                + Z_DENY.replace(
                        "  name: deny-ingress\n",
                        "  name: deny-ingress\n  annotations:\n    padding: \"" + "p".repeat(3_500_000) + "\"\n");
        for (String[] input : new String[][] {{"a NetworkPolicyList", list}, {"a document over 3 MiB", huge}}) {
            EnforcementModel model = bed.write(input[1]);
            Verdicts v = model.enforced(input[0] + " enforced");
            assertThat(good.differences(v))
                    .as(input[0] + ": the engine reads z's policy from it")
                    .isNotEmpty();
            sandbox.awaitConverged();
            ProbeResult probed = sandbox.probe(List.of(FaultBed.TCP80)).get(0);
            assertThat(probed.mismatches())
                    .as(input[0] + "\n" + TableRenderer.render(probed))
                    .isEmpty();
            converge(Y_POLICY, X_POLICY_JSON);
        }
    }

    @Test
    @Order(3)
    void unreadableInputAtAStartPublishesNothingAndNoAgentIsInSync() throws Exception {
        EnforcementModel model = converge(Y_POLICY, X_POLICY_JSON);
        Verdicts good = model.enforced("the good load enforced");
        ExpectationTimeline timeline = new ExpectationTimeline(good.name(), good);
        try (ContinuousProber prober = bed.prober(timeline, good)) {
            prober.awaitWholeRounds(0, 1, HOLD);
            sandbox.killControlPlane();
            int down = timeline.enter("control plane killed", good);
            prober.awaitWholeRounds(down, 1, HOLD);

            // A change (z isolated) and, in the copy the control plane reads, a fixture that is not UTF-8.
            EnforcementModel next = bed.write(Y_POLICY + "---\n" + Z_DENY);
            Path fixture = sandbox.assignedManifests().resolve("fixture.yaml");
            byte[] goodFixture = Files.readAllBytes(fixture);
            byte[] latin1 = ("# caf\u00e9\n" + new String(goodFixture, StandardCharsets.UTF_8))
                    .getBytes(StandardCharsets.ISO_8859_1);
            replace(fixture, latin1);
            sandbox.startControlPlane();
            int started = timeline.enter("control plane started on a bad directory: nothing published", good);
            awaitMetric("the first load is rejected", () -> bed.controlPlaneMetric(LOAD_ERRORS), v -> v >= 1);
            assertThat(bed.controlPlaneHttp("/readyz").status()).isNotEqualTo(200);
            prober.awaitWholeRounds(started, 2, HOLD);
            assertThat(bed.agentStatus(NODE1).getInSync())
                    .as("node-1 told it is in sync")
                    .isFalse();
            assertThat(bed.agentStatus(NODE2).getInSync())
                    .as("node-2 told it is in sync")
                    .isFalse();

            // A fresh agent meanwhile: nothing is published, so it enforces the state it kept (the good
            // one); until it does, its predecessor's table drops its pods' new connections (fail-closed).
            Verdicts closed = model.verdicts(
                    "node-1 killed (fail-closed leftover)",
                    n -> n.equals(NODE1) ? model.killed(NODE1, false) : model.enforcing(n));
            timeline.enter("killing node-1", good, closed);
            sandbox.killAgent(NODE1);
            sandbox.startAgent(NODE1);
            timeline.enter("node-1 killed, a new one starting on its kept state", closed, good);
            // It answers inspection only once the kept state is in the kernel.
            assertThat(bed.awaitAgentAnswers(NODE1, HOLD).getInSync())
                    .as("the fresh node-1 told it is in sync")
                    .isFalse();
            int fresh = timeline.enter("node-1 restarted, never in sync, enforcing its kept state", good);
            prober.awaitWholeRounds(fresh, 2, HOLD);
            assertThat(bed.agentStatus(NODE1).getInSync())
                    .as("the fresh node-1 told it is in sync")
                    .isFalse();

            // Repaired: the first good load is published and everything converges on it.
            Verdicts repaired = next.enforced("z isolated, enforced");
            Verdicts half1 = EnforcementModel.verdicts(
                    "node-1 repaired, node-2 old",
                    good.pods(),
                    next.pods(),
                    n -> n.equals(NODE1) ? next.enforcing(n) : model.enforcing(n));
            Verdicts half2 = EnforcementModel.verdicts(
                    "node-1 kept, node-2 repaired",
                    good.pods(),
                    next.pods(),
                    n -> n.equals(NODE1) ? model.enforcing(NODE1) : next.enforcing(n));
            timeline.enter("repaired: converging", good, half1, half2, repaired);
            replace(fixture, goodFixture);
            sandbox.awaitConverged();
            int last = timeline.enter(repaired.name(), repaired);
            prober.awaitWholeRounds(last, 2, HOLD);
            bed.report(
                    "bad manifests at a start: nothing published, agents not in sync, a fresh agent enforced its kept state; "
                            + "0 wrong verdicts over %d rounds",
                    prober.rounds());
            assertThat(prober.wrongVerdicts()).as("wrong verdicts").isEmpty();
        }
    }

    /** Writes the good state (y's policy in YAML, x's in JSON) and waits for it. */
    private EnforcementModel converge(String yaml, String json) throws Exception {
        Files.writeString(bed.manifests.resolve("policies.json"), json);
        return bed.converge(yaml);
    }

    /** Replaces a file of the watched copy at once (rename), so the control plane never reads half of it. */
    private static void replace(Path file, byte[] bytes) throws Exception {
        Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.write(temp, bytes);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    interface DoubleCheck {
        boolean test(double value);
    }

    private static void awaitMetric(String what, DoubleSupplier metric, DoubleCheck done) throws InterruptedException {
        long deadline = System.nanoTime() + SIGNAL_TIMEOUT.toNanos();
        double v = metric.getAsDouble();
        while (!done.test(v)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not within " + SIGNAL_TIMEOUT + " (last value " + v + ")");
            }
            Thread.sleep(100);
            v = metric.getAsDouble();
        }
    }
}
