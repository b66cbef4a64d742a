// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import com.google.protobuf.util.JsonFormat;
import com.google.protobuf.util.Timestamps;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.flows.FlowEvents;
import io.kubeverdict.controlplane.flows.FlowHistory;
import io.kubeverdict.controlplane.manifests.LoadedManifests;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.controlplane.tools.ClusterObjects;
import io.kubeverdict.controlplane.tools.FlowReplay;
import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.proto.v1.DirectionExplanation;
import io.kubeverdict.proto.v1.EndpointId;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.FlowRecord;
import io.kubeverdict.proto.v1.FlowSide;
import io.kubeverdict.proto.v1.ListFlowsResponse;
import io.kubeverdict.proto.v1.PolicyId;
import io.kubeverdict.proto.v1.Tuple;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The flow history's figures (issue #31): heap per 100k distinct flows (measured against the
 * history's own estimate), replay throughput (against the bare decide of the same tuples), and
 * recommend for a namespace with 1000 flows (against whatif on the same input, both as the CLI
 * runs them in-process). Run: ./mvnw -B -o -pl control-plane -am -Pbenchmarks -DskipTests verify
 * -Dbench.main=io.kubeverdict.controlplane.bench.FlowHistoryBenchmark
 */
public final class FlowHistoryBenchmark {
    private static final int WORKLOADS = 50;

    private FlowHistoryBenchmark() {}

    public static void main(String[] args) throws Exception {
        memory(100_000);
        if (Boolean.getBoolean("bench.memoryOnly")) {
            return;
        }
        Path dir = Files.createTempDirectory("kv-flow-bench-");
        writeCluster(dir);
        List<FlowRecord> flows = flows(1000);
        Path file = dir.resolve("flows.json");
        Files.writeString(
                file,
                JsonFormat.printer()
                        .print(ListFlowsResponse.newBuilder().addAllFlows(flows).build()));
        replay(dir.resolve("cluster"), flows);
        recommend(dir.resolve("cluster"), file);
    }

    // ------------------------------------------------------------------ memory

    private static void memory(int distinct) {
        FlowHistory history = new FlowHistory(
                new FlowHistory.Limits(Duration.ofHours(1), Duration.ofMinutes(1), 10 * distinct, 1L << 40));
        long now = System.currentTimeMillis();
        // Measured from before the events exist: the records keep strings the events brought.
        long before = usedAfterGc();
        List<VerdictEvent> events = new ArrayList<>(distinct);
        for (int i = 0; i < distinct; i++) {
            events.add(event(i, now));
        }
        for (VerdictEvent e : events) {
            history.record(
                    FlowEvents.observation(
                                    e,
                                    pod -> Map.of(
                                            "app",
                                            pod.substring(pod.indexOf('/') + 1, pod.indexOf('-')),
                                            "pod-template-hash",
                                            "7d4b9c5f6",
                                            "tier",
                                            "backend"))
                            .orElseThrow(),
                    now);
        }
        events.clear();
        long after = usedAfterGc();
        System.out.printf(
                Locale.ROOT,
                "flow history: %d records, heap %.1f MiB = %d bytes/flow; estimate %d bytes/flow (measured/estimate %.2f)%n",
                history.records(),
                (after - before) / 1048576.0,
                (after - before) / history.records(),
                history.approximateBytes() / history.records(),
                (after - before) / (double) history.approximateBytes());
    }

    /** A verdict between two of 1000 workloads in 20 namespaces on one of 100 ports: distinct for i < 100k. */
    static VerdictEvent event(int i, long now) {
        int src = i % 1000;
        int dst = (i / 1000) % 1000;
        int port = 8000 + i / 1_000_000 + (i % 100);
        String srcPod = "w" + src + "-7d4b9c5f6-x2x9z";
        String dstPod = "w" + dst + "-7d4b9c5f6-abcde";
        return VerdictEvent.newBuilder()
                .setTime(Timestamps.fromMillis(now))
                .setExplanation(Explanation.newBuilder()
                        .setTuple(Tuple.newBuilder()
                                .setSrcIp("10.1." + (src / 250) + "." + (src % 250))
                                .setDstIp("10.2." + (dst / 250) + "." + (dst % 250))
                                .setProtocol(6)
                                .setDstPort(port + (i / 100_000)))
                        .setVerdict(Verdict.VERDICT_ALLOW)
                        .setSource(EndpointId.newBuilder()
                                .setNamespace("ns" + (src % 20))
                                .setPod(srcPod))
                        .setDestination(EndpointId.newBuilder()
                                .setNamespace("ns" + (dst % 20))
                                .setPod(dstPod))
                        .setIngress(DirectionExplanation.newBuilder()
                                .setEvaluated(true)
                                .setIsolated(true)
                                .setVerdict(Verdict.VERDICT_ALLOW)
                                .setPolicy(PolicyId.newBuilder()
                                        .setTier("default")
                                        .setName("ns" + (dst % 20) + "/allow-web"))
                                .setRuleId("ingress[" + (i % 3) + "]")))
                .build();
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    // ------------------------------------------------------------------ a namespace of 50 workloads

    private static void writeCluster(Path dir) throws Exception {
        StringBuilder y = new StringBuilder("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n");
        for (int w = 0; w < WORKLOADS; w++) {
            y.append("---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: shop\n  name: w")
                    .append(w)
                    .append("-7d4b9c5f6-x2x9z\n  labels: {app: w")
                    .append(w)
                    .append(", pod-template-hash: 7d4b9c5f6}\nspec:\n  nodeName: node-")
                    .append(w % 5)
                    .append("\n  containers: [{name: c, image: i, ports: [{name: http, containerPort: 8080}]}]\n")
                    .append("status: {phase: Running, podIP: 10.244.")
                    .append(w % 5)
                    .append(".")
                    .append(10 + w)
                    .append("}\n");
        }
        y.append("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n")
                .append(
                        "metadata: {namespace: shop, name: deny-all}\nspec: {podSelector: {}, policyTypes: [Ingress]}\n");
        Files.createDirectories(dir.resolve("cluster"));
        Files.writeString(dir.resolve("cluster/cluster.yaml"), y.toString());
    }

    /** Allowed flows among the namespace's workloads: n distinct (source, destination, port). */
    private static List<FlowRecord> flows(int n) {
        List<FlowRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int src = i % WORKLOADS;
            int dst = (src + 1 + (i / WORKLOADS) % (WORKLOADS - 1)) % WORKLOADS;
            int port = 8080 + i / (WORKLOADS * (WORKLOADS - 1));
            out.add(FlowRecord.newBuilder()
                    .setSource(side(src))
                    .setDestination(side(dst))
                    .setProtocol(6)
                    .setPort(port)
                    .setVerdict(Verdict.VERDICT_ALLOW)
                    .setCount(1)
                    .build());
        }
        return out;
    }

    private static FlowSide side(int w) {
        return FlowSide.newBuilder()
                .setNamespace("shop")
                .setWorkload("w" + w)
                .putLabels("app", "w" + w)
                .setLastPod("shop/w" + w + "-7d4b9c5f6-x2x9z")
                .build();
    }

    // ------------------------------------------------------------------ replay

    private static void replay(Path cluster, List<FlowRecord> flows) throws Exception {
        LoadedManifests m = new ManifestLoader().load(cluster);
        OfflineCluster c = new OfflineCluster(
                new ClusterObjects(m.namespaces(), m.pods(), m.policies(), m.adminPolicies(), m.nodes()));
        FlowReplay replay = new FlowReplay(c);
        List<String[]> tuples = new ArrayList<>();
        for (FlowRecord f : flows) {
            tuples.add(new String[] {
                replay.pod(f.getSource()).orElseThrow().ips().get(0),
                replay.pod(f.getDestination()).orElseThrow().ips().get(0)
            });
        }
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            int replayed = 0;
            for (int k = 0; k < 20; k++) {
                replayed += replay.replay(flows).replayed();
            }
            long t1 = System.nanoTime();
            int decided = 0;
            for (int k = 0; k < 20; k++) {
                for (int i = 0; i < tuples.size(); i++) {
                    decided += c.allowed(
                                    tuples.get(i)[0],
                                    tuples.get(i)[1],
                                    6,
                                    flows.get(i).getPort())
                            ? 1
                            : 1;
                }
            }
            long t2 = System.nanoTime();
            double replayRate = replayed / ((t1 - t0) / 1e9);
            double decideRate = decided / ((t2 - t1) / 1e9);
            System.out.printf(
                    Locale.ROOT,
                    "replay round %d: %.0f flows/s; bare decide (both nodes) %.0f tuples/s; replay/decide %.2f%n",
                    round,
                    replayRate,
                    decideRate,
                    replayRate / decideRate);
        }
    }

    // ------------------------------------------------------------------ recommend

    private static void recommend(Path cluster, Path flows) {
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            int whatif = cli("whatif", "--manifests", cluster.toString(), "--flows", flows.toString());
            long t1 = System.nanoTime();
            int rec = cli(
                    "recommend", "--namespace", "shop", "--manifests", cluster.toString(), "--flows", flows.toString());
            long t2 = System.nanoTime();
            System.out.printf(
                    Locale.ROOT,
                    "recommend (1000 flows, %d workloads) round %d: %.0f ms (exit %d); whatif same input %.0f ms "
                            + "(exit %d); recommend/whatif %.2f%n",
                    WORKLOADS,
                    round,
                    (t2 - t1) / 1e6,
                    rec,
                    (t1 - t0) / 1e6,
                    whatif,
                    (t2 - t1) / (double) (t1 - t0));
        }
    }

    private static int cli(String... args) {
        StringWriter sink = new StringWriter();
        return ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(sink))
                .setErr(new PrintWriter(sink))
                .execute(args);
    }
}
