// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.persist.StateFileFormat;
import io.kubeverdict.agent.sync.SnapshotAssembler;
import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.NetnsEventLoops;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.jni.Netns;
import io.kubeverdict.policy.SnapshotDigest;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.InSync;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.PersistedNodeState;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WatchVerdictsRequest;
import io.kubeverdict.testing.tier.KernelTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent process on real packets: a node namespace routing between pods a and b, b isolated
 * for ingress by a policy that allows a on TCP 8080 only (8081 is denied). The control plane is
 * scripted and listens on the node namespace's loopback.
 */
@KernelTest
class AgentKernelTest {
    private static final int CP_PORT = 19090;
    private static final int INSPECT_PORT = 19102;
    private static final int METRICS_PORT = 19101;
    private static final int ALLOWED = 8080;
    private static final int DENIED = 8081;
    private static final int CONNECT_TIMEOUT = 1500;

    private PodPair pods;
    private ScriptedControlPlane cp;
    private final List<AgentProcess> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        pods = PodPair.create("kvt-ag");
        pods.echoServerOnB(ALLOWED);
        pods.echoServerOnB(DENIED);
        pods.awaitConnectivity(DENIED);
        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (AgentProcess agent : agents) {
                agent.close();
            }
            if (cp != null) {
                cp.close();
            }
        } finally {
            if (pods != null) {
                pods.close(); // the namespaces go whatever happened above
            }
        }
    }

    private AgentProcess startAgent(boolean failOpen, String... extraArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--node",
                "node-1",
                "--control-plane",
                "127.0.0.1:" + CP_PORT,
                "--nfqueue-id",
                "7",
                "--queues",
                "2",
                "--queue-length",
                "512",
                "--metrics-bind-address",
                "127.0.0.1:" + METRICS_PORT,
                "--inspect-listen",
                "127.0.0.1:" + INSPECT_PORT,
                "--auth",
                "none"));
        if (failOpen) {
            args.add("--fail-open");
        }
        args.addAll(List.of(extraArgs));
        AgentProcess agent = AgentProcess.start(pods.node.name(), args);
        agents.add(agent);
        return agent;
    }

    /** The full state on a new stream, then InSync; returns the next sequence. */
    private static long sendSnapshot(ScriptedControlPlane.Stream stream, long seq) {
        return sendSnapshot(stream, seq, ALLOWED);
    }

    /** The same, with b allowing a on these TCP ports. */
    private static long sendSnapshot(ScriptedControlPlane.Stream stream, long seq, int... allowedPorts) {
        List<ToAgent> messages = snapshotMessages(seq, allowedPorts);
        stream.send(messages.toArray(ToAgent[]::new));
        return seq + messages.size();
    }

    /** The full state from sequence {@code seq}, then InSync. */
    private static List<ToAgent> snapshotMessages(long seq, int... allowedPorts) {
        Rule.Builder rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                .setRuleId("ingress[0]");
        for (int port : allowedPorts) {
            rule.addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(port));
        }
        ToAgent policy = ToAgent.newBuilder()
                .setSequence(seq + 1)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(io.kubeverdict.agent.testing.Messages.policyId("x/b-from-a"))
                        .setPolicy(Policy.newBuilder().addInboundRules(rule)))
                .build();
        return List.of(
                ipSet(seq, "pods-a", PodPair.A_IP, PodPair.A_IP6),
                policy,
                dualStack(endpoint(seq + 2, "x", "a", PodPair.A_IP), PodPair.A_IP6),
                dualStack(endpoint(seq + 3, "x", "b", PodPair.B_IP, "x/b-from-a"), PodPair.B_IP6),
                inSync(seq + 4));
    }

    /** The agent's Sync call; a JVM starting on a busy 2-core machine may take a while. */
    private ScriptedControlPlane.Stream streamOf(AgentProcess agent) throws Exception {
        ScriptedControlPlane.Stream stream = cp.pollStream(60_000);
        if (stream == null) {
            throw new AssertionError(
                    "agent opened no Sync stream within 60 s (alive: " + agent.alive() + "); its log:\n" + agent.log());
        }
        return stream;
    }

    private static ToAgent dualStack(ToAgent endpointUpdate, String ip6) {
        ToAgent.Builder b = endpointUpdate.toBuilder();
        b.getWorkloadEndpointUpdateBuilder().getEndpointBuilder().addIps(ip6);
        return b.build();
    }

    private void awaitEnforcing(AgentProcess agent, long sequence) throws Exception {
        try {
            cp.awaitReport(sequence);
        } catch (AssertionError e) {
            throw new AssertionError("agent did not report sequence " + sequence + "; its log:\n" + agent.log(), e);
        }
    }

    @Test
    void enforcesAfterInSyncAndServesStatusAndHealth() throws Exception {
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("no agent: open")
                .isTrue();
        assertThat(pods.canConnect(PodPair.B_IP6, DENIED, CONNECT_TIMEOUT))
                .as("no agent: IPv6 open (%s)", pods.lastFailure())
                .isTrue();
        AgentProcess agent = startAgent(false, "--on-exit", "remove");
        ScriptedControlPlane.Stream stream = streamOf(agent);
        assertThat(stream.request.getNode()).isEqualTo("node-1");
        long next = sendSnapshot(stream, 1);
        awaitEnforcing(agent, next - 1);

        EventLoopGroup loops = NetnsEventLoops.group(pods.node.path(), 1);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", INSPECT_PORT)
                .usePlaintext()
                .directExecutor() // no shared gRPC threads started from the namespace
                .eventLoopGroup(loops)
                .channelFactory(() -> {
                    // the channel's socket is opened where it is constructed: in the node namespace
                    try {
                        return Netns.call(pods.node.path(), NioSocketChannel::new);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .build();
        try {
            // Watch the agent's denials while traffic runs.
            BlockingQueue<Explanation> denials = new LinkedBlockingQueue<>();
            AgentInspectionGrpc.newStub(channel)
                    .watchVerdicts(
                            WatchVerdictsRequest.newBuilder()
                                    .setVerdict(Verdict.VERDICT_DENY)
                                    .build(),
                            new StreamObserver<>() {
                                @Override
                                public void onNext(Explanation e) {
                                    denials.add(e);
                                }

                                @Override
                                public void onError(Throwable t) {}

                                @Override
                                public void onCompleted() {}
                            });
            Thread.sleep(500); // the watch is registered before the packets come

            assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                    .as("a -> b:8080 allowed\n" + agent.log())
                    .isTrue();
            assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                    .as("a -> b:8081 denied")
                    .isFalse();
            assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                    .as("IPv6 a -> b:8080 allowed")
                    .isTrue();
            assertThat(pods.canConnect(PodPair.B_IP6, DENIED, CONNECT_TIMEOUT))
                    .as("IPv6 a -> b:8081 denied")
                    .isFalse();

            Explanation denial = denials.poll(10, TimeUnit.SECONDS);
            assertThat(denial).as("the denial streamed by WatchVerdicts").isNotNull();
            assertThat(denial.getTuple().getSrcIp()).isEqualTo(PodPair.A_IP);
            assertThat(denial.getTuple().getDstIp()).isEqualTo(PodPair.B_IP);
            assertThat(denial.getTuple().getDstPort()).isEqualTo(DENIED);
            assertThat(denial.getDestination().getPod()).isEqualTo("b");
            assertThat(denial.getIngress().getIsolated()).isTrue();
            assertThat(denial.getIngress().getReason()).contains("no rule matched");

            // The source port the agent read from the packet is the client socket's own.
            int clientPort = Netns.call(pods.a.path(), () -> {
                try (Socket s = new Socket()) {
                    s.bind(new InetSocketAddress(PodPair.A_IP, 0));
                    int port = s.getLocalPort();
                    try {
                        s.connect(new InetSocketAddress(PodPair.B_IP, DENIED), CONNECT_TIMEOUT);
                    } catch (IOException expected) {
                        // denied: the SYN is dropped
                    }
                    return port;
                }
            });
            assertThat(clientPort).isPositive();
            Explanation withPort = denials.poll(10, TimeUnit.SECONDS);
            while (withPort != null && withPort.getTuple().getSrcPort() != clientPort) {
                withPort = denials.poll(10, TimeUnit.SECONDS); // earlier denials (retransmitted SYNs)
            }
            assertThat(withPort).as("a denial from source port " + clientPort).isNotNull();
            assertThat(withPort.getTuple().getDstPort()).isEqualTo(DENIED);

            AgentStatus status = AgentInspectionGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getStatus(AgentStatusRequest.getDefaultInstance());
            assertThat(status.getInSync()).isTrue();
            assertThat(status.getAppliedSequence()).isEqualTo(next - 1);
            assertThat(status.getEndpoints()).isEqualTo(2);
            assertThat(status.getQueueTotal()).as("nothing waiting").isZero();
            assertThat(status.getQueueId()).isEqualTo(7);
            assertThat(status.getKernelPath()).isIn("nft-queue", "xtables-nfqueue");
            assertThat(HealthGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.getDefaultInstance())
                            .getStatus())
                    .isEqualTo(ServingStatus.SERVING);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }

        String metrics = pods.node.exec("curl", "-s", "http://127.0.0.1:" + METRICS_PORT + "/metrics");
        assertThat(metrics).contains("kubeverdict_verdicts_total{family=\"ipv4\",protocol=\"tcp\",verdict=\"drop\"}");
        assertThat(verdicts(metrics, "drop")).as("dropped SYNs counted").isGreaterThanOrEqualTo(1);
        assertThat(verdicts(metrics, "accept")).as("accepted SYNs counted").isGreaterThanOrEqualTo(1);
        // --queues 2: both verdict queues bound, each with its own kernel counters; the DNS queue follows the range
        assertThat(metrics)
                .contains("kubeverdict_queue_bound{queue=\"7\"} 1.0")
                .contains("kubeverdict_queue_bound{queue=\"8\"} 1.0");
        assertThat(metrics)
                .as("--queue-length 512 on every verdict queue")
                .contains("kubeverdict_queue_length{queue=\"7\"} 512.0")
                .contains("kubeverdict_queue_length{queue=\"8\"} 512.0");
        assertThat(pods.node.exec("cat", "/proc/net/netfilter/nfnetlink_queue")).containsPattern("(?m)^\\s*9\\s");

        // Clean stop with --on-exit=remove: the table goes, nothing stays blocked.
        assertThat(agent.stop()).as("SIGTERM exit (the JVM reports 128+15)").isIn(0, 143);
        assertThat(agent.log()).contains("nftables table kube_verdict removed");
        assertThat(pods.node.exec("nft", "list", "tables")).doesNotContain("kube_verdict");
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("after a clean stop: open")
                .isTrue();
        assertThat(pods.canConnect(PodPair.B_IP6, DENIED, CONNECT_TIMEOUT))
                .as("after a clean stop: IPv6 open")
                .isTrue();
    }

    private static double verdicts(String metrics, String verdict) {
        String key = "kubeverdict_verdicts_total{family=\"ipv4\",protocol=\"tcp\",verdict=\"" + verdict + "\"} ";
        for (String line : metrics.split("\n")) {
            if (line.startsWith(key)) {
                return Double.parseDouble(line.substring(key.length()).trim());
            }
        }
        return -1;
    }

    @Test
    void failClosedKillBlocksNewConnectionsUntilTheAgentIsBack() throws Exception {
        AgentProcess agent = startAgent(false);
        long next = sendSnapshot(streamOf(agent), 1);
        awaitEnforcing(agent, next - 1);
        Socket established = pods.connectAToB(ALLOWED, CONNECT_TIMEOUT);
        assertThat(established).as("allowed connection\n" + agent.log()).isNotNull();

        agent.kill();
        // The allowed key is in the verdict cache, which answers until the dead agent's liveness
        // element expires (CacheSettings.LIVENESS_SECONDS after its last renewal).
        Thread.sleep(io.kubeverdict.agent.nft.CacheSettings.LIVENESS_SECONDS * 1000L + 500);
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("killed, fail-closed: new connections dropped")
                .isFalse();
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("killed, fail-closed: IPv6 dropped")
                .isFalse();
        assertThat(PodPair.echoes(established))
                .as("established connections keep working")
                .isTrue();

        AgentProcess restarted = startAgent(false);
        ScriptedControlPlane.Stream stream = streamOf(restarted);
        // Before InSync the restarted agent answers the leftover table's queue with the default: drop.
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("restarted, not in sync yet")
                .isFalse();
        next = sendSnapshot(stream, 1);
        awaitEnforcing(restarted, next - 1);
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("enforcing again: allowed\n" + restarted.log())
                .isTrue();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("enforcing again: denied")
                .isFalse();

        // A clean stop of a fail-closed agent (a rolling update) keeps the table: still closed.
        assertThat(restarted.stop()).as("SIGTERM exit (the JVM reports 128+15)").isIn(0, 143);
        assertThat(restarted.log()).contains("nftables table kube_verdict kept");
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("stopped, fail-closed: new connections dropped")
                .isFalse();
        assertThat(PodPair.echoes(established))
                .as("established connections keep working")
                .isTrue();
        established.close();
    }

    /**
     * A node's reboot: the agent gone, its table gone, the control plane unreachable. The agent
     * that starts then enforces the state it kept before anything answers it, and the control
     * plane's state once it is back.
     */
    @Test
    void afterARebootTheKeptStateIsEnforcedUntilTheControlPlaneAnswers(@TempDir Path stateDir) throws Exception {
        String keep = stateDir.toString();
        AgentProcess agent = startAgent(false, "--state-dir", keep);
        long next = sendSnapshot(streamOf(agent), 1);
        awaitEnforcing(agent, next - 1);
        awaitLog(agent, "nftables table kube_verdict written");
        Path file = stateDir.resolve("node-1.state");
        awaitCondition(() -> Files.exists(file), "the state file " + file, agent);

        agent.kill();
        cp.close();
        cp = null; // nothing answers on the control plane's port from here on
        pods.node.exec("nft", "delete", "table", "inet", "kube_verdict");
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("rebooted: no table, nothing enforced")
                .isTrue();

        AgentProcess restarted = startAgent(false, "--state-dir", keep);
        awaitLog(restarted, "enforcing the kept state of sequence " + (next - 1));
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("kept state: denied\n" + restarted.log())
                .isFalse();
        assertThat(pods.canConnect(PodPair.B_IP6, DENIED, CONNECT_TIMEOUT))
                .as("kept state: IPv6 denied")
                .isFalse();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("kept state: allowed")
                .isTrue();

        // The control plane comes back with a change: 8081 allowed now. The agent reconnects (backoff) and applies it.
        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
        long last = sendSnapshot(streamOf(restarted), 1, ALLOWED, DENIED) - 1;
        awaitEnforcing(restarted, last);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("the control plane's change\n" + restarted.log())
                .isTrue();
        awaitCondition(() -> keptSequence(file) == last, "the new state kept", restarted);
    }

    /**
     * A DaemonSet rollout: the agent restarts while the control plane's state stays the same. The
     * new agent offers the digest of the state it kept, gets one resumed InSync instead of the
     * snapshot, and enforces that state: what the snapshot would have given.
     */
    @Test
    void aRestartedAgentResumesFromItsKeptState(@TempDir Path stateDir) throws Exception {
        String keep = stateDir.toString();
        AgentProcess agent = startAgent(false, "--state-dir", keep);
        long next = sendSnapshot(streamOf(agent), 1);
        awaitEnforcing(agent, next - 1);
        Path file = stateDir.resolve("node-1.state");
        awaitCondition(() -> keptSequence(file) == next - 1, "the state file " + file, agent);
        agent.kill();

        AgentProcess restarted = startAgent(false, "--state-dir", keep);
        ScriptedControlPlane.Stream stream = streamOf(restarted);
        SnapshotAssembler fullResync = new SnapshotAssembler("node-1");
        for (ToAgent message : snapshotMessages(1, ALLOWED)) {
            fullResync.apply(message);
        }
        assertThat(stream.request.getResumeDigest())
                .as("the kept state offered\n" + restarted.log())
                .isEqualTo(SnapshotDigest.of(fullResync.snapshot()));
        stream.send(ToAgent.newBuilder()
                .setSequence(1)
                .setInSync(InSync.newBuilder().setChangeBoundaries(true).setResumed(true))
                .build());
        awaitEnforcing(restarted, 1);
        awaitLog(restarted, "in sync at sequence 1 (resumed");
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("resumed: denied\n" + restarted.log())
                .isFalse();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("resumed: allowed")
                .isTrue();
        // Deltas go on from the resumed state.
        stream.send(
                ToAgent.newBuilder()
                        .setSequence(2)
                        .setActivePolicyUpdate(
                                snapshotMessages(1, ALLOWED, DENIED).get(1).getActivePolicyUpdate())
                        .build(),
                ToAgent.newBuilder()
                        .setSequence(3)
                        .setInSync(InSync.newBuilder().setChangeBoundaries(true))
                        .build());
        awaitEnforcing(restarted, 3);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("the change after the resume\n" + restarted.log())
                .isTrue();
    }

    /** A file the agent must not trust: refused with one line that says why, and nothing of it enforced. */
    @Test
    void aCorruptOrForeignStateFileIsNotEnforced(@TempDir Path stateDir) throws Exception {
        cp.close();
        cp = null;
        Path file = stateDir.resolve("node-1.state");
        PersistedNodeState foreign = PersistedNodeState.newBuilder()
                .setNode("node-2")
                .setSequence(9)
                .setWrittenUnixMillis(System.currentTimeMillis())
                .setSnapshot(io.kubeverdict.agent.testing.SnapshotFixtures.allowFromB().toBuilder()
                        .setNode("node-2"))
                .build();
        Files.write(file, StateFileFormat.encode(foreign));
        AgentProcess agent = startAgent(false, "--state-dir", stateDir.toString());
        awaitLog(agent, "state file " + file + " not enforced: written for another node");
        assertThat(agent.log()).doesNotContain("enforcing the kept state");
        assertThat(pods.node
                        .tryExec("nft", "list", "table", "inet", "kube_verdict")
                        .exitCode())
                .as("no table written")
                .isNotZero();
        agent.kill();

        byte[] intact = StateFileFormat.encode(foreign.toBuilder()
                .setNode("node-1")
                .setSnapshot(foreign.getSnapshot().toBuilder().setNode("node-1"))
                .build());

        // Truncated, on a node whose pod ranges the agent is told: the guard alone holds every pod
        // address (none is known) until the control plane answers, and then drops (fail-closed).
        Files.write(file, java.util.Arrays.copyOf(intact, intact.length / 2));
        AgentProcess again = startAgent(
                false, "--state-dir", stateDir.toString(), "--pod-cidr", "10.77.0.0/16", "--pod-guard-hold", "500");
        awaitLog(again, "state file " + file + " not enforced: truncated");
        awaitLog(again, "enforcing the pod address guard alone");
        assertThat(again.log()).doesNotContain("enforcing the kept state");
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT))
                .as("guard alone: held, then dropped\n" + again.log())
                .isFalse();
        assertThat(pods.canConnect(PodPair.B_IP6, ALLOWED, CONNECT_TIMEOUT))
                .as("IPv6 outside the given ranges: free")
                .isTrue();
    }

    /**
     * A pod whose network namespace sends before its state reaches the node (the guard): its first
     * packet is held, not delivered; once the state knows the pod, the packet is judged by it —
     * allowed, the connection completes; denied, nothing ever reaches b.
     */
    @Test
    void aPodThatSendsBeforeItsStateArrivesIsHeldThenJudged() throws Exception {
        AgentProcess agent =
                startAgent(false, "--pod-cidr", "10.77.0.0/16", "--pod-cidr", "fd77::/16", "--pod-guard-hold", "60000");
        ScriptedControlPlane.Stream stream = streamOf(agent);
        // The state knows b (isolated: a may reach 8080 only) but not a yet.
        long seq = 1;
        stream.send(
                ipSet(seq, "pods-a", PodPair.A_IP, PodPair.A_IP6),
                policyAllowingFromA(seq + 1, ALLOWED),
                dualStack(endpoint(seq + 2, "x", "b", PodPair.B_IP, "x/b-from-a"), PodPair.B_IP6),
                inSync(seq + 3));
        awaitEnforcing(agent, seq + 3);
        awaitLog(agent, "nftables table kube_verdict written");

        java.util.concurrent.CompletableFuture<Boolean> allowed =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> connects(ALLOWED, 120_000));
        awaitLog(agent, "holding packet");
        // Long enough to outlast the wait for a's state on a busy machine; it ends in a timeout.
        java.util.concurrent.CompletableFuture<Boolean> denied =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> connects(DENIED, 30_000));
        awaitCondition(() -> agent.log().split("holding packet", -1).length > 2, "both first packets held", agent);
        assertThat(allowed)
                .as("held: nothing delivered before a's state arrives")
                .isNotDone();
        assertThat(denied).isNotDone();

        // a's state arrives: the held packets are judged by it.
        stream.send(dualStack(endpoint(seq + 4, "x", "a", PodPair.A_IP), PodPair.A_IP6));
        awaitEnforcing(agent, seq + 4);
        assertThat(allowed.get(150, TimeUnit.SECONDS))
                .as("allowed once known\n" + agent.log())
                .isTrue();
        // The denied one's SYN was dropped when judged; its retries are not held any more, and dropped too.
        assertThat(denied.get(150, TimeUnit.SECONDS))
                .as("denied once known: never delivered")
                .isFalse();
        // a is known now: its new connections are not held.
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();
    }

    private boolean connects(int port, int timeoutMillis) {
        try {
            return pods.canConnect(port, timeoutMillis);
        } catch (Exception e) {
            return false;
        }
    }

    private static ToAgent policyAllowingFromA(long seq, int port) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(io.kubeverdict.agent.testing.Messages.policyId("x/b-from-a"))
                        .setPolicy(Policy.newBuilder()
                                .addInboundRules(Rule.newBuilder()
                                        .setAction(Action.ALLOW)
                                        .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                                        .addPorts(PortMatch.newBuilder()
                                                .setProtocol(Protocol.TCP)
                                                .setPort(port))
                                        .setRuleId("ingress[0]"))))
                .build();
    }

    private static long keptSequence(Path file) {
        try {
            StateFileFormat.Decoded decoded =
                    StateFileFormat.decode(Files.readAllBytes(file), "node-1", System.currentTimeMillis(), 3_600_000);
            return decoded.usable() ? decoded.state().getSequence() : -1;
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    private static void awaitLog(AgentProcess agent, String text) throws InterruptedException {
        awaitCondition(() -> agent.log().contains(text), "\"" + text + "\" in the agent's log", agent);
    }

    private static void awaitCondition(java.util.function.BooleanSupplier condition, String what, AgentProcess agent)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline || !agent.alive()) {
                throw new AssertionError("waited in vain for " + what + " (agent alive: " + agent.alive()
                        + "); its log:\n" + agent.log());
            }
            Thread.sleep(50);
        }
    }

    @Test
    void failOpenKillLetsNewConnectionsThroughUntilTheAgentIsBack() throws Exception {
        AgentProcess agent = startAgent(true);
        long next = sendSnapshot(streamOf(agent), 1);
        awaitEnforcing(agent, next - 1);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("enforcing: denied\n" + agent.log())
                .isFalse();

        agent.kill();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("killed, fail-open: bypassed")
                .isTrue();
        assertThat(pods.canConnect(PodPair.B_IP6, DENIED, CONNECT_TIMEOUT))
                .as("killed, fail-open: IPv6 bypassed")
                .isTrue();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();

        AgentProcess restarted = startAgent(true);
        next = sendSnapshot(streamOf(restarted), 1);
        awaitEnforcing(restarted, next - 1);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("enforcing again: denied\n" + restarted.log())
                .isFalse();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();
    }

    @Test
    void policyUpdatesUnderConnectionLoadNeitherHangNorWronglyRefuse() throws Exception {
        AgentProcess agent = startAgent(false);
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendSnapshot(stream, 1);
        awaitEnforcing(agent, seq - 1);

        AtomicLong ok = new AtomicLong();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger running = new AtomicInteger(1);
        Thread load = new Thread(
                () -> {
                    while (running.get() == 1) {
                        try {
                            if (pods.canConnect(ALLOWED, 3000)) {
                                ok.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                    }
                },
                "connection-load");
        load.start();
        // Churn that never changes a's right to reach b:8080: other pods come and go, the set of
        // allowed sources grows and shrinks around a, the policy is re-sent.
        for (int i = 0; i < 30; i++) {
            String other = "10.77.9." + (i + 10);
            stream.send(ipSet(seq++, "pods-a", PodPair.A_IP, other));
            stream.send(endpoint(seq++, "x", "c" + i, other, "x/b-from-a"));
            stream.send(io.kubeverdict.agent.testing.Messages.removeEndpoint(seq++, "x", "c" + i));
            stream.send(ipSet(seq++, "pods-a", PodPair.A_IP));
            Thread.sleep(50);
        }
        awaitEnforcing(agent, seq - 1);
        running.set(0);
        load.join(10_000);

        assertThat(load.isAlive()).as("no connection hangs").isFalse();
        assertThat(failed.get())
                .as("connections wrongly refused (of %d)\n%s", ok.get() + failed.get(), agent.log())
                .isZero();
        assertThat(ok.get()).isPositive();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT))
                .as("still enforcing")
                .isFalse();
    }
}
