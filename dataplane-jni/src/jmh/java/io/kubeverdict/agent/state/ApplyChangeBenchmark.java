// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.state;

import io.kubeverdict.agent.sync.ResyncRequiredException;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.policy.SnapshotIndex;
import io.kubeverdict.policy.SyntheticCluster;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.IpSet;
import io.kubeverdict.proto.v1.IpSetDeltaUpdate;
import io.kubeverdict.proto.v1.IpSetUpdate;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.WorkloadEndpoint;
import io.kubeverdict.proto.v1.WorkloadEndpointUpdate;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One change applied in the agent on one node of a 150k-pod cluster ({@link SyntheticCluster}:
 * 110 endpoints, 420 IP sets with 586k members): the ToAgent message applied by the
 * {@link SnapshotAssembler}, then the new generation made and swapped in by the
 * {@link StateEnforcer} (snapshot, index, selected addresses, learned-address view; the kernel
 * step is a no-op here). {@code incremental} is the enforcer as it is (index updated from the
 * previous generation); {@code fullRecompile} makes the same generation with a compile from
 * scratch, as the agent did before, in the same run. Changes: {@code member} = a cluster pod
 * joins or leaves a set (alternately), {@code endpoint} = one local pod's labels and tier lists
 * change and change back (a relabelled pod that other policies select).
 *
 * <p>Run: with the test class path of dataplane-jni and its reactor modules, {@code java -cp ...
 * org.openjdk.jmh.Main ApplyChangeBenchmark -f 1 -wi 3 -w 1s -i 5 -r 2s}; docs/benchmarks.md
 * ("Verdict function") shows how to build that class path without installing anything.
 */
@State(Scope.Thread)
@BenchmarkMode({Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(1)
public class ApplyChangeBenchmark {

    @Param({"member", "endpoint"})
    public String change;

    private final SnapshotAssembler assembler = new SnapshotAssembler("node-0042");
    private final StateHolder holder = new StateHolder(0);
    private final StateEnforcer enforcer = new StateEnforcer(holder, selected -> {}, Clock.systemUTC());
    private final StateHolder recompiled = new StateHolder(0);
    private long sequence;
    private ToAgent.Builder[] toggle;
    private int next;

    @Setup
    public void setUp() throws Exception {
        NodeSnapshot snapshot = new SyntheticCluster(42, 16).snapshot;
        for (IpSet set : snapshot.getIpSetsList()) {
            apply(ToAgent.newBuilder()
                    .setIpSetUpdate(IpSetUpdate.newBuilder()
                            .setId(set.getId())
                            .setType(set.getType())
                            .addAllMembers(set.getMembersList())));
        }
        for (ActivePolicy p : snapshot.getPoliciesList()) {
            apply(ToAgent.newBuilder()
                    .setActivePolicyUpdate(
                            ActivePolicyUpdate.newBuilder().setId(p.getId()).setPolicy(p.getPolicy())));
        }
        for (Endpoint e : snapshot.getEndpointsList()) {
            apply(ToAgent.newBuilder()
                    .setWorkloadEndpointUpdate(
                            WorkloadEndpointUpdate.newBuilder().setId(e.getId()).setEndpoint(e.getEndpoint())));
        }
        enforcer.enforce(assembler.snapshot(), sequence);
        long members = snapshot.getIpSetsList().stream()
                .mapToLong(IpSet::getMembersCount)
                .sum();
        if ("member".equals(change)) {
            // A rule's peer set (s0 is named by many rules), and a cluster pod not yet in it.
            String pod = SyntheticCluster.v4(123_457);
            toggle = new ToAgent.Builder[] {
                ToAgent.newBuilder()
                        .setIpSetDeltaUpdate(
                                IpSetDeltaUpdate.newBuilder().setId("s0").addAddedMembers(pod)),
                ToAgent.newBuilder()
                        .setIpSetDeltaUpdate(
                                IpSetDeltaUpdate.newBuilder().setId("s0").addRemovedMembers(pod)),
            };
        } else {
            Endpoint e = snapshot.getEndpoints(5);
            WorkloadEndpoint relabelled = e.getEndpoint().toBuilder()
                    .putLabels("app", "other")
                    .clearTiers()
                    .addTiers(snapshot.getEndpoints(6).getEndpoint().getTiers(0))
                    .build();
            toggle = new ToAgent.Builder[] {
                ToAgent.newBuilder()
                        .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                                .setId(e.getId())
                                .setEndpoint(relabelled)),
                ToAgent.newBuilder()
                        .setWorkloadEndpointUpdate(WorkloadEndpointUpdate.newBuilder()
                                .setId(e.getId())
                                .setEndpoint(e.getEndpoint())),
            };
        }
        applyNext();
        enforcer.enforce(assembler.snapshot(), sequence);
        if (!enforcer.lastIndexUpdate().incremental()) {
            throw new IllegalStateException("the change was not applied incrementally: " + enforcer.lastIndexUpdate());
        }
        System.out.printf(
                "%n[setup] %s change: %d ip sets, %d members, %d endpoints; first update: %s%n",
                change,
                snapshot.getIpSetsCount(),
                members,
                snapshot.getEndpointsCount(),
                enforcer.lastIndexUpdate().summary());
    }

    private void apply(ToAgent.Builder message) throws ResyncRequiredException {
        assembler.apply(message.setSequence(++sequence).build());
    }

    private void applyNext() throws ResyncRequiredException {
        apply(toggle[next]);
        next ^= 1;
    }

    /** The agent's path: the index updated from the previous generation. */
    @Benchmark
    public EnforcedState incremental() throws Exception {
        applyNext();
        enforcer.enforce(assembler.snapshot(), sequence);
        return holder.current();
    }

    /** The same generation made as before: the whole snapshot compiled from scratch. */
    @Benchmark
    public EnforcedState fullRecompile() throws Exception {
        applyNext();
        NodeSnapshot snapshot = assembler.snapshot();
        recompiled.swap(new EnforcedState(
                snapshot, SnapshotIndex.compile(snapshot), SelectedAddresses.of(snapshot), sequence, 0));
        return recompiled.current();
    }
}
