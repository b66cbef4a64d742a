package io.kubeverdict.agent.run;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.NetnsEventLoops;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.jni.NativeLibrary;
import io.kubeverdict.jni.Netns;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.AgentStatus;
import io.kubeverdict.proto.v1.AgentStatusRequest;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.ToAgent;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent process on real packets: a node namespace routing between pods a and b, b isolated
 * for ingress by a policy that allows a on TCP 8080 only (8081 is denied). The control plane is
 * scripted and listens on the node namespace's loopback.
 */
class AgentKernelTest {
    private static final int CP_PORT = 19090;
    private static final int INSPECT_PORT = 19102;
    private static final int ALLOWED = 8080;
    private static final int DENIED = 8081;
    private static final int CONNECT_TIMEOUT = 1500;

    private PodPair pods;
    private ScriptedControlPlane cp;
    private final List<AgentProcess> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "kernel tests run as root");
        assumeTrue(NativeLibrary.isAvailable(), () -> "native shim: " + NativeLibrary.unavailabilityCause());
        pods = PodPair.create("kvt-ag");
        pods.echoServerOnB(ALLOWED);
        pods.echoServerOnB(DENIED);
        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AgentProcess agent : agents) {
            agent.close();
        }
        if (cp != null) {
            cp.close();
        }
        if (pods != null) {
            pods.close();
        }
    }

    private AgentProcess startAgent(boolean failOpen) throws Exception {
        List<String> args = new ArrayList<>(List.of("--node", "node-1", "--control-plane", "127.0.0.1:" + CP_PORT,
                "--nfqueue-id", "7", "--metrics-bind-address", "off", "--inspect-listen", "127.0.0.1:" + INSPECT_PORT));
        if (failOpen) {
            args.add("--fail-open");
        }
        AgentProcess agent = AgentProcess.start(pods.node.name(), args);
        agents.add(agent);
        return agent;
    }

    /** The full state on a new stream, then InSync; returns the next sequence. */
    private static long sendSnapshot(ScriptedControlPlane.Stream stream, long seq) {
        ToAgent policy = ToAgent.newBuilder().setSequence(seq + 1).setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                .setId(io.kubeverdict.agent.testing.Messages.policyId("x/b-from-a"))
                .setPolicy(Policy.newBuilder().addInboundRules(Rule.newBuilder().setAction(Action.ALLOW)
                        .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                        .addPorts(PortMatch.newBuilder().setProtocol(Protocol.TCP).setPort(ALLOWED))
                        .setRuleId("ingress[0]")))).build();
        stream.send(ipSet(seq, "pods-a", PodPair.A_IP), policy,
                endpoint(seq + 2, "x", "a", PodPair.A_IP),
                endpoint(seq + 3, "x", "b", PodPair.B_IP, "x/b-from-a"),
                inSync(seq + 4));
        return seq + 5;
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
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("no agent: open").isTrue();
        AgentProcess agent = startAgent(false);
        ScriptedControlPlane.Stream stream = cp.nextStream();
        assertThat(stream.request.getNode()).isEqualTo("node-1");
        long next = sendSnapshot(stream, 1);
        awaitEnforcing(agent, next - 1);

        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).as("a -> b:8080 allowed\n" + agent.log()).isTrue();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("a -> b:8081 denied").isFalse();

        EventLoopGroup loops = NetnsEventLoops.group(pods.node.path(), 1);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", INSPECT_PORT).usePlaintext()
                .eventLoopGroup(loops).channelFactory(() -> {
                    // the channel's socket is opened where it is constructed: in the node namespace
                    try {
                        return Netns.call(pods.node.path(), NioSocketChannel::new);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }).build();
        try {
            AgentStatus status = AgentInspectionGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getStatus(AgentStatusRequest.getDefaultInstance());
            assertThat(status.getInSync()).isTrue();
            assertThat(status.getAppliedSequence()).isEqualTo(next - 1);
            assertThat(status.getEndpoints()).isEqualTo(2);
            assertThat(status.getQueueId()).isEqualTo(7);
            assertThat(status.getKernelPath()).isIn("nft-queue", "xtables-nfqueue");
            assertThat(HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }

        // Clean stop: the table goes, nothing stays blocked.
        assertThat(agent.stop()).as("SIGTERM exit (the JVM reports 128+15)").isIn(0, 143);
        assertThat(agent.log()).contains("nftables table kube_verdict removed");
        assertThat(pods.node.exec("nft", "list", "tables")).doesNotContain("kube_verdict");
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("after a clean stop: open").isTrue();
    }

    @Test
    void failClosedKillBlocksNewConnectionsUntilTheAgentIsBack() throws Exception {
        AgentProcess agent = startAgent(false);
        long next = sendSnapshot(cp.nextStream(), 1);
        awaitEnforcing(agent, next - 1);
        Socket established = pods.connectAToB(ALLOWED, CONNECT_TIMEOUT);
        assertThat(established).as("allowed connection\n" + agent.log()).isNotNull();

        agent.kill();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).as("killed, fail-closed: new connections dropped").isFalse();
        assertThat(PodPair.echoes(established)).as("established connections keep working").isTrue();

        AgentProcess restarted = startAgent(false);
        ScriptedControlPlane.Stream stream = cp.nextStream();
        // Before InSync the restarted agent answers the leftover table's queue with the default: drop.
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).as("restarted, not in sync yet").isFalse();
        next = sendSnapshot(stream, 1);
        awaitEnforcing(restarted, next - 1);
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).as("enforcing again: allowed\n" + restarted.log()).isTrue();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("enforcing again: denied").isFalse();
        established.close();
    }

    @Test
    void failOpenKillLetsNewConnectionsThroughUntilTheAgentIsBack() throws Exception {
        AgentProcess agent = startAgent(true);
        long next = sendSnapshot(cp.nextStream(), 1);
        awaitEnforcing(agent, next - 1);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("enforcing: denied\n" + agent.log()).isFalse();

        agent.kill();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("killed, fail-open: bypassed").isTrue();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();

        AgentProcess restarted = startAgent(true);
        next = sendSnapshot(cp.nextStream(), 1);
        awaitEnforcing(restarted, next - 1);
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("enforcing again: denied\n" + restarted.log()).isFalse();
        assertThat(pods.canConnect(ALLOWED, CONNECT_TIMEOUT)).isTrue();
    }

    @Test
    void policyUpdatesUnderConnectionLoadNeitherHangNorWronglyRefuse() throws Exception {
        AgentProcess agent = startAgent(false);
        ScriptedControlPlane.Stream stream = cp.nextStream();
        long seq = sendSnapshot(stream, 1);
        awaitEnforcing(agent, seq - 1);

        AtomicLong ok = new AtomicLong();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger running = new AtomicInteger(1);
        Thread load = new Thread(() -> {
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
        }, "connection-load");
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
        assertThat(failed.get()).as("connections wrongly refused (of %d)\n%s", ok.get() + failed.get(), agent.log()).isZero();
        assertThat(ok.get()).isPositive();
        assertThat(pods.canConnect(DENIED, CONNECT_TIMEOUT)).as("still enforcing").isFalse();
    }
}
