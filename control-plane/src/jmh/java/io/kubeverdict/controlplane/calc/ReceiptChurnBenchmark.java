// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.calc;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.kubeverdict.controlplane.receipts.EnforcedConditions;
import io.kubeverdict.controlplane.receipts.EnforcementEvents;
import io.kubeverdict.controlplane.receipts.LocalStatements;
import io.kubeverdict.controlplane.receipts.PeerAnswers;
import io.kubeverdict.controlplane.receipts.PolicyReceipts;
import io.kubeverdict.controlplane.receipts.PolicyRef;
import io.kubeverdict.controlplane.receipts.Receipt;
import io.kubeverdict.controlplane.receipts.ReceiptingCalculator;
import io.kubeverdict.controlplane.receipts.ReplicatedReceipts;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Enforcement receipts at the scale ({@link SyntheticCluster}: 5000 nodes, 150k pods, 10k
 * namespaces, 10k NetworkPolicies, 100 AdminNetworkPolicies).
 *
 * <p>{@code policyChange} / {@code policyChangeWithReceipts}: one NetworkPolicy's port flips and
 * the changed nodes' snapshots are rebuilt, without and with the receipts the control plane keeps
 * on the calculation thread (the write through {@link ReceiptingCalculator}, each changed node's
 * publication, the end of the publication): their ratio is what receipts cost a change.
 *
 * <p>{@code churnMinute}: one simulated minute (simulated clock) of 20 policy writes a second, half
 * of them to AdminNetworkPolicies, on the receipts of the full calculation; each node of a written
 * policy acks after 100 ms plus an exponential 200 ms, 0.5 % of the nodes after 90 s, one node
 * never. Once a simulated second the real {@link EnforcedConditions} and {@link EnforcementEvents}
 * decide what the writer would write; printed: status writes and Events per second (max, mean),
 * the condition changes an unbounded, uncoalesced writer would have written, and the wall time of
 * a sweep (the receipts' lock is held while it reads them).
 */
@State(Scope.Benchmark)
public class ReceiptChurnBenchmark {
    @Param({"5000"})
    int nodes;

    @Param({"10000"})
    int namespaces;

    @Param({"150000"})
    int pods;

    @Param({"10000"})
    int policies;

    @Param({"100"})
    int adminPolicies;

    SyntheticCluster cluster;
    IncrementalPolicyCalculator calc;
    PolicyReceipts receipts;
    ReceiptingCalculator receipting;
    NetworkPolicy[] variants;
    /** Each node's published policy list (the churn republishes it: the same instance, as a change that keeps the set). */
    final java.util.Map<String, List<io.kubeverdict.proto.v1.ActivePolicy>> lists = new java.util.HashMap<>();

    final java.util.Set<String> evenNodes = new java.util.HashSet<>();
    final java.util.Set<String> oddNodes = new java.util.HashSet<>();

    long version;
    long generation = 1;
    int flip;

    @Setup(Level.Trial)
    public void setUp() {
        cluster = new SyntheticCluster(nodes, namespaces, pods, policies, adminPolicies, 42);
        calc = cluster.calculateAll();
        receipts = new PolicyReceipts();
        receipting = new ReceiptingCalculator(calc, receipts, System::nanoTime);
        NetworkPolicy p = cluster.policies.get(policies / 2);
        // The same policy on another port: its rules, and so the snapshots of its nodes, change.
        NetworkPolicy other = new NetworkPolicyBuilder(p).build();
        io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort port9999 =
                new io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort();
        port9999.setPort(new io.fabric8.kubernetes.api.model.IntOrString(9999));
        other.getSpec().getIngress().forEach(r -> r.setPorts(List.of(port9999)));
        other.getSpec().getEgress().forEach(r -> r.setPorts(List.of(port9999)));
        variants = new NetworkPolicy[] {other, p};
        for (String node : calc.nodes()) {
            NodeSnapshot s = calc.snapshot(node);
            lists.put(node, s.getPoliciesList());
            receipts.nodePublished(node, ++version, s.getPoliciesList(), 0);
        }
        receipts.publicationDone(0);
        for (String node : calc.nodes()) {
            receipts.applied(node, version, 0);
        }
        int i = 0;
        for (String node : calc.nodes()) {
            ((i++ & 1) == 0 ? evenNodes : oddNodes).add(node);
        }
        System.out.printf(
                "peer answer about every policy: %d bytes%n",
                LocalStatements.of(receipts, "b", oddNodes, List.of(), 3).getSerializedSize());
    }

    private NetworkPolicy nextVariant() {
        NetworkPolicy p = variants[flip++ & 1];
        p.getMetadata().setGeneration(++generation);
        return p;
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void policyChange(Blackhole bh) {
        calc.upsertPolicy(nextVariant());
        for (String node : calc.drainChangedNodes()) {
            bh.consume(calc.snapshot(node));
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void policyChangeWithReceipts(Blackhole bh) {
        receipting.upsertPolicy(nextVariant());
        for (String node : calc.drainChangedNodes()) {
            NodeSnapshot s = calc.snapshot(node);
            receipts.nodePublished(node, ++version, s.getPoliciesList(), 0);
            bh.consume(s);
        }
        receipts.publicationDone(0);
    }

    /** What one replica reads alone: every policy's receipt (the baseline of {@link #peerRound}). */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int localRead() {
        return receipts.all(0).size();
    }

    /**
     * One round between two replicas, half the nodes' agents on each: one answers its peer about
     * every policy (ListLocalReceipts, serialised as on the wire) and the peer merges the answer
     * into every receipt: what the writer's sweep costs each second with two replicas.
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public int peerRound() throws com.google.protobuf.InvalidProtocolBufferException {
        byte[] wire = LocalStatements.of(receipts, "b", oddNodes, List.of(), 3).toByteArray();
        io.kubeverdict.proto.v1.LocalReceipts answer = io.kubeverdict.proto.v1.LocalReceipts.parseFrom(wire);
        ReplicatedReceipts a = new ReplicatedReceipts(receipts, () -> evenNodes);
        a.askPeers("a", (named, max) -> new PeerAnswers(List.of(PeerAnswers.Answer.of(answer)), true));
        return a.all(0).receipts().size() + wire.length;
    }

    private record Ack(long atNanos, String node, long version) {}

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public long churnMinute() {
        final long second = 1_000_000_000L;
        SplittableRandom random = new SplittableRandom(7);
        List<Receipt> all = receipts.all(0);
        List<PolicyRef> admin = new ArrayList<>();
        List<PolicyRef> networkPolicies = new ArrayList<>();
        for (Receipt r : all) {
            (r.ref().namespace().isEmpty() ? admin : networkPolicies).add(r.ref());
        }
        List<String> nodeNames = new ArrayList<>(calc.nodes());
        String silent = nodeNames.get(0);
        EnforcedConditions conditions = new EnforcedConditions();
        EnforcementEvents events = new EnforcementEvents(Duration.ofSeconds(60));
        EnforcedConditions unbounded = new EnforcedConditions();
        PriorityQueue<Ack> acks = new PriorityQueue<>((a, b) -> Long.compare(a.atNanos, b.atNanos));
        long start = 1_000 * second; // simulated clock
        long gen = 1_000_000;
        int maxWrites = 0, totalWrites = 0, maxEvents = 0, totalEvents = 0, maxUnbounded = 0, totalUnbounded = 0;
        long maxSweepNanos = 0;
        int seconds = 60;
        for (int s = 1; s <= seconds; s++) {
            for (int c = 0; c < 20; c++) {
                long now = start + (s - 1) * second + c * (second / 20);
                while (!acks.isEmpty() && acks.peek().atNanos <= now) {
                    Ack a = acks.poll();
                    receipts.applied(a.node, a.version, a.atNanos);
                }
                List<PolicyRef> pool = (c & 1) == 0 && !admin.isEmpty() ? admin : networkPolicies;
                PolicyRef ref = pool.get(random.nextInt(pool.size()));
                receipts.written(ref, ++gen, "", now);
                Receipt r = receipts.receipt(ref, Integer.MAX_VALUE).orElseThrow();
                for (Receipt.NodeReceipt n : r.nodeReceipts()) {
                    long v = ++version;
                    receipts.nodePublished(n.node(), v, lists.get(n.node()), now);
                    if (!n.node().equals(silent)) {
                        long delay = random.nextInt(1000) < 5
                                ? 90 * second
                                : 100_000_000L + (long) (-Math.log(1 - random.nextDouble()) * 200_000_000L);
                        acks.add(new Ack(now + delay, n.node(), v));
                    }
                }
                receipts.publicationDone(now);
            }
            long now = start + s * second;
            while (!acks.isEmpty() && acks.peek().atNanos <= now) {
                Ack a = acks.poll();
                receipts.applied(a.node, a.version, a.atNanos);
            }
            long t0 = System.nanoTime();
            List<Receipt> view = receipts.all(0);
            List<EnforcedConditions.Due> due = conditions.due(view, now, 10);
            due.forEach(d -> conditions.written(d.ref(), d.condition(), now));
            int posted = events.due(view, ref -> receipts.receipt(ref, 3).orElse(null), x -> 0, now, start, 5)
                    .size();
            maxSweepNanos = Math.max(maxSweepNanos, System.nanoTime() - t0);
            // What an unbounded writer without coalescing would write: every change of the condition.
            List<EnforcedConditions.Due> every = unbounded.due(view, now, Integer.MAX_VALUE);
            every.forEach(d -> unbounded.written(d.ref(), d.condition(), now - 60 * second));
            maxWrites = Math.max(maxWrites, due.size());
            totalWrites += due.size();
            maxEvents = Math.max(maxEvents, posted);
            totalEvents += posted;
            maxUnbounded = Math.max(maxUnbounded, every.size());
            totalUnbounded += every.size();
        }
        System.out.printf(
                "churn 20 writes/s for %d s at %d nodes: status writes/s max %d mean %.2f; events/s max %d mean %.2f;"
                        + " unbounded condition changes/s max %d mean %.2f; sweep max %.1f ms%n",
                seconds,
                nodeNames.size(),
                maxWrites,
                totalWrites / (double) seconds,
                maxEvents,
                totalEvents / (double) seconds,
                maxUnbounded,
                totalUnbounded / (double) seconds,
                maxSweepNanos / 1e6);
        return totalWrites + totalEvents;
    }
}
