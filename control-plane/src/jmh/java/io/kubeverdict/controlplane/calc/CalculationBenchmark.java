// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.Pod;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The calculation at the scale: 5000 nodes, 150k pods, 10k namespaces, 10k policies; with
 * {@code adminPolicies}, also that many AdminNetworkPolicies, a BaselineAdminNetworkPolicy
 * selecting every pod, and 5000 Node objects.
 * {@code fullCalculation}: every object upserted into a fresh calculator and every node's
 * snapshot built. {@code podLabelChange}: one pod's app label flips (it enters/leaves the pod
 * sets of its namespace's policies and the policies' selections), then the changes are drained
 * and published as the calculation loop does (the changed nodes' snapshots and the changed sets,
 * once, to a {@link io.kubeverdict.controlplane.sync.SnapshotHub} holding every node) — the time
 * from event to published state, from which each subscriber's diff is made.
 * {@code podNoopUpdate} is the same-run baseline: an update that changes nothing the calculation
 * reads (a new annotation). The calculated cluster those two change is a state of its own
 * ({@link Calculated}), so that {@code fullCalculation} does not hold a second calculation in
 * its heap (at 500k pods the two did not fit in 4 GiB).
 */
@State(Scope.Benchmark)
public class CalculationBenchmark {
    @Param({"5000"})
    int nodes;

    @Param({"10000"})
    int namespaces;

    @Param({"150000"})
    int pods;

    @Param({"10000"})
    int policies;
    /** AdminNetworkPolicies (mixed subjects) plus, when positive, a BaselineAdminNetworkPolicy for every pod and the Nodes. */
    @Param({"0", "100"})
    int adminPolicies;
    /** ClusterNetworkPolicies (both tiers; with them, the Nodes too). */
    @Param({"0"})
    int clusterNetworkPolicies;

    SyntheticCluster cluster;

    @Setup(Level.Trial)
    public void setUp() {
        cluster = new SyntheticCluster(nodes, namespaces, pods, policies, adminPolicies, clusterNetworkPolicies, 42);
    }

    /** The cluster calculated once, with the pod versions the change benchmarks flip between. */
    @State(Scope.Benchmark)
    public static class Calculated {
        IncrementalPolicyCalculator calc;
        Pod[] variants;
        Pod[] noop;
        java.util.List<NodeSnapshot> published;
        final io.kubeverdict.controlplane.sync.SnapshotHub hub = new io.kubeverdict.controlplane.sync.SnapshotHub();
        int flip;

        @Setup(Level.Trial)
        public void setUp(CalculationBenchmark b) {
            SyntheticCluster cluster = b.cluster;
            calc = cluster.calculateAll();
            Pod p = cluster.pods.get(b.pods / 2);
            Pod other = new io.fabric8.kubernetes.api.model.PodBuilder(p)
                    .editMetadata()
                    .addToLabels("app", "app-changed")
                    .endMetadata()
                    .build();
            variants = new Pod[] {other, p};
            Pod annotated = new io.fabric8.kubernetes.api.model.PodBuilder(p)
                    .editMetadata()
                    .addToAnnotations("touched", "yes")
                    .endMetadata()
                    .build();
            noop = new Pod[] {annotated, p};
            published = new java.util.ArrayList<>();
            calc.drainChanges();
            for (String node : calc.nodes()) {
                published.add(calc.snapshot(node));
            }
            hub.publish(published, java.util.List.of(), java.util.List.of(), 1);
        }

        /**
         * What the calculation loop does after an event: the changed nodes' snapshots and the
         * changed sets published to the hub in one batch (no subscribers: their diffs are the
         * senders' work).
         */
        void publish() {
            PolicyCalculator.Changes changes = calc.drainChanges();
            java.util.List<NodeSnapshot> built =
                    new java.util.ArrayList<>(changes.nodes().size());
            for (String node : changes.nodes()) {
                built.add(calc.publishableSnapshot(node));
            }
            hub.publish(built, changes.sets(), changes.droppedSets(), 1);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int fullCalculation() {
        IncrementalPolicyCalculator c = cluster.calculateAll();
        return c.nodes().size();
    }

    /**
     * What the enforcement receipts add to publishing the full calculation: every node's snapshot
     * told to a fresh {@link io.kubeverdict.controlplane.receipts.PolicyReceipts} (its policy list
     * read into names), then the end of the publication; compare with {@link #fullCalculation}.
     */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int receiptsOfFullPublication(Calculated c) {
        io.kubeverdict.controlplane.receipts.PolicyReceipts receipts =
                new io.kubeverdict.controlplane.receipts.PolicyReceipts();
        long version = 0;
        for (NodeSnapshot s : c.published) {
            receipts.nodePublished(s.getNode(), ++version, s.getPoliciesList(), version);
        }
        receipts.publicationDone(version);
        return receipts.size();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void podLabelChange(Calculated c) {
        c.calc.upsertPod(c.variants[c.flip++ & 1]);
        c.publish();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void podNoopUpdate(Calculated c) {
        c.calc.upsertPod(c.noop[c.flip++ & 1]);
        c.publish();
    }

    /**
     * Retained heap of a fully calculated cluster (inputs dropped), and the shape of the result.
     * Run: java -Xmx4g -cp ... io.kubeverdict.controlplane.calc.CalculationBenchmark; the size
     * from -Dnodes, -Dnamespaces, -Dpods, -Dpolicies, -Dadmin, -Dcnp (default: the benchmark's).
     */
    public static void main(String[] args) {
        SyntheticCluster c = SyntheticCluster.fromSystemProperties();
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long c0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        IncrementalPolicyCalculator calc = c.calculateAll();
        long t1 = System.nanoTime();
        long c1 = threads.getCurrentThreadCpuTime();
        Map<String, NodeSnapshot> snaps = new HashMap<>();
        long endpoints = 0;
        long sets = 0;
        long members = 0;
        long pols = 0;
        for (String n : calc.nodes()) {
            NodeSnapshot s = calc.snapshot(n);
            snaps.put(n, s);
            endpoints += s.getEndpointsCount();
            sets += s.getIpSetsCount();
            pols += s.getPoliciesCount();
            members += s.getIpSetsList().stream()
                    .mapToLong(x -> x.getMembersCount())
                    .sum();
        }
        c = null;
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        long used = rt.totalMemory() - rt.freeMemory();
        System.out.printf(
                "full calculation (one pass, cold JVM): %d ms wall, %d ms CPU of the calculating thread%n",
                (t1 - t0) / 1_000_000, (c1 - c0) / 1_000_000);
        System.out.printf(
                "nodes %d, endpoints %d, per-node policies %d, per-node ip sets %d (members %d), distinct sets %d%n",
                snaps.size(), endpoints, pols, sets, members, calc.ipSetCount());
        System.out.printf(
                "retained heap with calculator and all snapshots: %d MiB (max %d MiB)%n",
                used >> 20, rt.maxMemory() >> 20);
        int histogram = Integer.getInteger("histogram", 0);
        if (histogram > 0) {
            printHistogram(histogram);
        }
        java.lang.ref.Reference.reachabilityFence(calc);
        java.lang.ref.Reference.reachabilityFence(snaps);
    }

    /** With -Dhistogram=N: the N classes of the retained heap with the most bytes (what the tiers cost, by class). */
    private static void printHistogram(int lines) {
        try {
            Object text = java.lang.management.ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "gcClassHistogram",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
            text.toString().lines().limit(lines + 3L).forEach(System.out::println);
        } catch (javax.management.JMException e) {
            System.out.println("no class histogram: " + e);
        }
    }
}
