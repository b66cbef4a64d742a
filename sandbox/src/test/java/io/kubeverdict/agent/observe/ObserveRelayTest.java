// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.inspect.VerdictFeed;
import io.kubeverdict.agent.state.StateEnforcer;
import io.kubeverdict.agent.state.StateHolder;
import io.kubeverdict.agent.testing.SnapshotFixtures;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.service.ControlPlane;
import io.kubeverdict.controlplane.source.EngineDirectoryReader;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.policy.PacketTuple;
import io.kubeverdict.proto.v1.ControlPlaneInspectionGrpc;
import io.kubeverdict.proto.v1.ObserveVerdictsRequest;
import io.kubeverdict.proto.v1.ObservedVerdict;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.VerdictEvent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kube-verdict observe end to end without a kernel: a real control plane on loopback, the agent's
 * own VerdictFeed and VerdictUplink connected to it, verdicts published into the feed as the
 * verdict loop would, and observers (a gRPC stream, and the CLI itself) on the control plane.
 */
class ObserveRelayTest {
    @TempDir
    Path manifests;

    private ControlPlane cp;
    private ManagedChannel agentChannel;
    private ManagedChannel observerChannel;
    private VerdictFeed feed;
    private VerdictUplink uplink;
    private final StateHolder state = new StateHolder(0);
    private final PacketTuple allowed =
            new PacketTuple().set(IpAddress.parse("10.0.0.2"), IpAddress.parse("10.0.0.1"), 6, 80);
    private final PacketTuple denied =
            new PacketTuple().set(IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.1"), 17, 53);
    private final PacketTuple fromRemote =
            new PacketTuple().set(IpAddress.parse("10.0.0.9"), IpAddress.parse("10.0.0.1"), 6, 443);

    {
        denied.srcPort = 43512; // as the agent's parser reads it from the packet
    }

    @BeforeEach
    void start() throws Exception {
        // The control plane knows y/remote on node-2, which node-1's agent does not hold, and x/a on
        // node-1 as the agent has it (so node-1 is a node it lists: observe --node checks the name).
        Files.writeString(manifests.resolve("cluster.yaml"), """
                apiVersion: v1
                kind: Pod
                metadata: {namespace: x, name: a, labels: {app: a}}
                spec: {nodeName: node-1, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.1}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {namespace: y, name: remote}
                spec: {nodeName: node-2, containers: [{name: c, image: i}]}
                status: {phase: Running, podIP: 10.0.0.9}
                """);
        cp = ControlPlane.start(
                new ControlPlane.Config(
                        new InetSocketAddress("127.0.0.1", 0), null, null, PolicySyncService.Options.defaults()),
                new IncrementalPolicyCalculator(),
                new ControlPlane.Source.Manifests(manifests, new EngineDirectoryReader()));
        cp.firstCalculation().get(60, TimeUnit.SECONDS);
        agentChannel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();
        observerChannel = NettyChannelBuilder.forAddress("127.0.0.1", cp.grpcPort())
                .usePlaintext()
                .build();

        // node-1's agent: x/a isolated for ingress, allowing only x/b (SnapshotFixtures.allowFromB).
        new StateEnforcer(state, selected -> {}, Clock.systemUTC()).enforce(SnapshotFixtures.allowFromB(), 1);
        feed = new VerdictFeed(256, state::generation);
        uplink = new VerdictUplink(agentChannel, "node-1", feed, 1000, new SimpleMeterRegistry(), Clock.systemUTC())
                .start();
    }

    @AfterEach
    void stop() throws Exception {
        uplink.close();
        feed.close();
        agentChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        observerChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cp.close();
    }

    /** What the agent's judge does for each packet. */
    private void judge(PacketTuple p) {
        feed.publish(p, state.decide(p));
    }

    /** Publishes until the observer has something (the uplink subscribes when its demand arrives). */
    private ObservedVerdict nextWhilePublishing(BlockingQueue<Object> inbox, PacketTuple... packets) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (PacketTuple p : packets) {
                judge(p);
            }
            Object item = inbox.poll(100, TimeUnit.MILLISECONDS);
            if (item instanceof Throwable t) {
                throw new AssertionError("observe stream failed", t);
            }
            if (item instanceof ObservedVerdict v && v.hasEvent()) {
                return v;
            }
        }
        throw new AssertionError("no verdict reached the observer");
    }

    private Context.CancellableContext observe(ObserveVerdictsRequest request, BlockingQueue<Object> inbox) {
        Context.CancellableContext ctx = Context.current().withCancellation();
        ctx.run(() -> ControlPlaneInspectionGrpc.newStub(observerChannel)
                .observeVerdicts(request, new StreamObserver<>() {
                    @Override
                    public void onNext(ObservedVerdict value) {
                        inbox.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        inbox.add(t);
                    }

                    @Override
                    public void onCompleted() {}
                }));
        return ctx;
    }

    @Test
    void theAgentsVerdictsReachAnObserverFilteredAndNamed() throws Exception {
        assertThat(feed.watchers())
                .as("nobody observes: the agent subscribes nothing")
                .isZero();
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        Context.CancellableContext call = observe(
                ObserveVerdictsRequest.newBuilder()
                        .setVerdict(Verdict.VERDICT_DENY)
                        .build(),
                inbox);
        try {
            VerdictEvent e = nextWhilePublishing(inbox, allowed, denied).getEvent();
            assertThat(e.getNode()).isEqualTo("node-1");
            assertThat(e.getTime().getSeconds()).isPositive();
            assertThat(e.getExplanation().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
            assertThat(e.getExplanation().getTuple().getSrcIp()).isEqualTo("10.0.0.3");
            assertThat(e.getExplanation().getTuple().getDstPort()).isEqualTo(53);
            assertThat(e.getExplanation().getTuple().getSrcPort()).isEqualTo(43512);
            assertThat(e.getExplanation().getSource().getPod()).isEqualTo("c");
            assertThat(e.getExplanation().getIngress().getDecidingTier()).isEqualTo("default");
            // Only denied verdicts were asked for: the allowed ones never show up.
            for (Object o : inbox) {
                if (o instanceof ObservedVerdict v && v.hasEvent()) {
                    assertThat(v.getEvent().getExplanation().getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
                }
            }
        } finally {
            call.cancel(null);
        }
        awaitTrue(() -> feed.watchers() == 0, "the agent unsubscribes once nobody observes");
    }

    @Test
    void verdictsOfOneKeyAreCountedIntoFewerEventsAndNoneIsLost() throws Exception {
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        Context.CancellableContext call = observe(
                ObserveVerdictsRequest.newBuilder()
                        .setVerdict(Verdict.VERDICT_DENY)
                        .build(),
                inbox);
        try {
            nextWhilePublishing(inbox, denied); // subscribed
            PacketTuple burst = new PacketTuple().set(IpAddress.parse("10.0.0.3"), IpAddress.parse("10.0.0.1"), 17, 54);
            for (int i = 0; i < 200; i++) {
                burst.srcPort = 40000 + i; // new connections of one key
                judge(burst);
            }
            long counted = 0;
            int events = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (counted < 200 && System.nanoTime() < deadline) {
                Object item = inbox.poll(100, TimeUnit.MILLISECONDS);
                if (item instanceof ObservedVerdict v
                        && v.hasEvent()
                        && v.getEvent().getExplanation().getTuple().getDstPort() == 54) {
                    counted += Math.max(1, v.getEvent().getCount());
                    events++;
                }
            }
            assertThat(counted).as("every verdict counted, none twice").isEqualTo(200);
            assertThat(events).as("coalesced into fewer events").isLessThan(200);
        } finally {
            call.cancel(null);
        }
    }

    @Test
    void theControlPlaneNamesThePodTheAgentDoesNotHold() throws Exception {
        BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        Context.CancellableContext call =
                observe(ObserveVerdictsRequest.newBuilder().setPod("y/remote").build(), inbox);
        try {
            VerdictEvent e =
                    nextWhilePublishing(inbox, allowed, denied, fromRemote).getEvent();
            assertThat(e.getExplanation().getTuple().getSrcIp()).isEqualTo("10.0.0.9");
            assertThat(e.getExplanation().getSource().getNamespace() + "/"
                            + e.getExplanation().getSource().getPod())
                    .isEqualTo("y/remote");
            assertThat(e.getExplanation().getDestination().getPod()).isEqualTo("a");
        } finally {
            call.cancel(null);
        }
    }

    @Test
    void theCliPrintsOneLinePerVerdict() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> ControlPlaneMain.commandLine()
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(
                        "observe",
                        "--control-plane",
                        "127.0.0.1:" + cp.grpcPort(),
                        "--verdict",
                        "Denied", // any case
                        "--node",
                        "node-1",
                        "--from-port",
                        "43512",
                        "--count",
                        "2",
                        "--wait",
                        "PT60S"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!exit.isDone() && System.nanoTime() < deadline) {
            judge(denied);
            judge(allowed);
            Thread.sleep(50);
        }
        assertThat(exit.get(5, TimeUnit.SECONDS)).as(err.toString()).isZero();
        var lines = out.toString().lines().toList();
        assertThat(lines.get(0)).startsWith("TIME").contains("NODE", "FROM", "TO", "PORT", "VERDICT", "DECIDED BY");
        assertThat(lines.subList(1, lines.size()))
                .hasSize(2)
                .allSatisfy(l -> assertThat(l)
                        .contains(
                                "node-1",
                                "x/c (10.0.0.3:43512)",
                                "x/a (10.0.0.1)",
                                "53/UDP",
                                "denied",
                                "ingress default of tier default (no rule matched)"));
    }

    @Test
    void theCliSaysWhenThePodOrNodeToFollowDoesNotExist() {
        for (String[] target : new String[][] {
            {"--node", "node-9", "--node node-9: no such node (the control plane knows node-1"},
            {"--pod", "zz/nope", "--pod zz/nope: no such pod"}
        }) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = ControlPlaneMain.commandLine()
                    .setOut(new PrintWriter(out))
                    .setErr(new PrintWriter(err))
                    .execute(
                            "observe",
                            "--control-plane",
                            "127.0.0.1:" + cp.grpcPort(),
                            target[0],
                            target[1],
                            "--wait",
                            "30s");
            assertThat(exit).as(err.toString()).isEqualTo(2);
            assertThat(err.toString()).contains(target[2]);
            assertThat(out.toString()).isEmpty();
        }
    }

    private static void awaitTrue(Supplier<Boolean> condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what);
            }
            Thread.sleep(20);
        }
    }
}
