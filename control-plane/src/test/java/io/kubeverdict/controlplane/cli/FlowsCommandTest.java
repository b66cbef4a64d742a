// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.Timestamps;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.flows.FlowRecorder;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.StagedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * `kube-verdict flows` against a real control plane on loopback (netpol-basic) whose flow history
 * got real explanations of the example (as agents relay them): filters, table and JSON.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FlowsCommandTest {
    static final String EXAMPLE = "../deploy/examples/netpol-basic";

    private ControlPlane cp;

    @BeforeAll
    void start() throws Exception {
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(Path.of(EXAMPLE), new EngineDirectoryReader()));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        FlowRecorder recorder = cp.keepFlowHistory(new FlowRecorder.Settings(
                new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 1000, 1 << 24),
                null,
                Duration.ofMinutes(1)));
        OfflineCluster cluster = example();
        long now = System.currentTimeMillis();
        for (String[] f : List.of(
                new String[] {"10.244.2.10", "10.244.1.10"}, // y/a -> x/a allowed
                new String[] {"10.244.2.10", "10.244.1.10"},
                new String[] {"10.244.3.10", "10.244.1.10"}, // z/a -> x/a denied
                new String[] {"10.244.1.10", "10.244.1.11"})) { // x/a -> x/b allowed
            // As the destination's node reports it (the source's node's report of an allowed connection
            // between two policed pods is left to it).
            recorder.record(VerdictEvent.newBuilder()
                    .setNode(cluster.nodeOf(f[1]).orElseThrow())
                    .setTime(Timestamps.fromMillis(now))
                    .setExplanation(cluster.explain(f[0], f[1], 6, 80))
                    .build());
        }
    }

    static OfflineCluster example() throws Exception {
        LoadedManifests m = new ManifestLoader().load(Path.of(EXAMPLE));
        return new OfflineCluster(
                new ClusterObjects(m.namespaces(), m.pods(), m.policies(), m.adminPolicies(), m.nodes()));
    }

    @AfterAll
    void stop() {
        cp.close();
    }

    private LiveCommandsTest.Run flows(String... args) {
        List<String> all = new ArrayList<>(List.of("flows", "--control-plane", "127.0.0.1:" + cp.grpcPort()));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(all.toArray(String[]::new));
        return new LiveCommandsTest.Run(exit, out.toString(), err.toString());
    }

    @Test
    void theTableListsEachFlowOnceWithItsCountMostSeenFirst() {
        var run = flows();
        assertThat(run.exit()).isZero();
        List<String> lines = run.out().lines().toList();
        assertThat(lines.get(0)).startsWith("FROM").contains("DECIDED BY").contains("COUNT");
        assertThat(lines).hasSize(4);
        assertThat(lines.get(1))
                .contains("y/a")
                .contains("x/a")
                .contains("80/TCP")
                .contains("allowed")
                .contains("ingress x/allow-a-from-y-web ingress[0]")
                .containsPattern("\\s2\\s");
    }

    @Test
    void filtersNarrowTheFlows() throws Exception {
        JsonNode denied = json(flows("--verdict", "denied", "-o", "json"));
        assertThat(denied.get("flows")).hasSize(1);
        assertThat(denied.get("flows").get(0).get("source").get("namespace").asString())
                .isEqualTo("z");
        assertThat(denied.get("flows").get(0).get("decidedBy").asString()).contains("tier");
        assertThat(json(flows("--policy", "x/allow-b-from-x", "-o", "json")).get("flows"))
                .hasSize(1);
        assertThat(json(flows("--namespace", "z", "-o", "json")).get("flows")).hasSize(1);
        assertThat(json(flows("--pod", "x/b", "-o", "json")).get("flows")).hasSize(1);
        assertThat(json(flows("--since", "1h", "-o", "json")).get("flows")).hasSize(3);
    }

    @Test
    void aStagedFlipGetsAStagedColumnAndOnlyThen() {
        FlowRecord plain = FlowRecord.newBuilder()
                .setSource(FlowSide.newBuilder().setNamespace("x").setWorkload("a"))
                .setDestination(FlowSide.newBuilder().setNamespace("x").setWorkload("b"))
                .setProtocol(6)
                .setPort(80)
                .setVerdict(Verdict.VERDICT_ALLOW)
                .setCount(3)
                .build();
        FlowRecord flip = plain.toBuilder()
                .setStaged(StagedVerdict.newBuilder()
                        .setVerdict(Verdict.VERDICT_DENY)
                        .setReason("denied by default/staged:x/deny-all (tier default)"))
                .build();
        FlowsCommand command = new FlowsCommand();
        String without =
                command.table(ListFlowsResponse.newBuilder().addFlows(plain).build());
        assertThat(without).doesNotContain("STAGED");
        String with = command.table(
                ListFlowsResponse.newBuilder().addFlows(plain).addFlows(flip).build());
        assertThat(with.lines().findFirst().orElseThrow()).endsWith("STAGED");
        assertThat(with).contains("would be denied: denied by default/staged:x/deny-all (tier default)");
    }

    @Test
    void aBadPodIsAUsageError() {
        assertThat(flows("--pod", "nope").exit()).isEqualTo(2);
    }

    private static JsonNode json(LiveCommandsTest.Run run) {
        assertThat(run.exit()).as(run.err()).isZero();
        return JsonMapper.builder().build().readTree(run.out());
    }
}
