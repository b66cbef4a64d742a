// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.StreamObserver;
import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.Messages;
import io.kubeverdict.agent.testing.NetnsEventLoops;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.jni.NativeLibrary;
import io.kubeverdict.jni.Netns;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.AgentInspectionGrpc;
import io.kubeverdict.proto.v1.Explanation;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.proto.v1.Verdict;
import io.kubeverdict.proto.v1.WatchVerdictsRequest;
import io.kubeverdict.testing.dp.Crafted;
import io.kubeverdict.testing.dp.RawSender;
import io.kubeverdict.testing.flow.LongLivedFlow;
import io.kubeverdict.testing.flow.LongLivedFlow.Kind;
import io.kubeverdict.testing.flow.UdpEchoServer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Established connections follow the policy, on real packets: the agent process runs in a node
 * namespace between pods a and b, driven by a scripted control plane; long-lived TCP (continuous
 * echo) and UDP (a datagram every 20 ms) connections run from a to b while the policy changes.
 * Every wait is bounded; the namespaces (and with them conntrack entries and tables) go at the end.
 */
class ExistingConnectionsKernelTest {
    private static final int CP_PORT = 19290;
    private static final int INSPECT_PORT = 19202;
    private static final int METRICS_PORT = 19201;
    private static final int TCP_KEPT = 8080;
    private static final int TCP_DENIED = 8081;
    private static final int UDP_KEPT = 9000;
    private static final int UDP_DENIED = 9001;
    private static final int SCTP_PORT = 9002;
    private static final String POLICY = "x/b-ingress";
    /** How long a connection must stay silent to count as cut; how long we wait for that. */
    private static final long QUIET_MILLIS = 1000;

    private static final long CUT_TIMEOUT_MILLIS = 15_000;

    private PodPair pods;
    private ScriptedControlPlane cp;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<AgentProcess> agents = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "kernel tests run as root");
        assumeTrue(NativeLibrary.isAvailable(), () -> "native shim: " + NativeLibrary.unavailabilityCause());
        pods = PodPair.create("kvt-ec");
        pods.echoServerOnB(TCP_KEPT);
        pods.echoServerOnB(TCP_DENIED);
        closeables.add(UdpEchoServer.start(pods.b.inside(), UDP_KEPT));
        closeables.add(UdpEchoServer.start(pods.b.inside(), UDP_DENIED));
        pods.awaitConnectivity(TCP_DENIED);
        cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (int i = closeables.size() - 1; i >= 0; i--) {
                closeables.get(i).close();
            }
            for (AgentProcess agent : agents) {
                agent.close();
            }
            if (cp != null) {
                cp.close();
            }
        } finally {
            if (pods != null) {
                pods.close();
            }
        }
    }

    // ------------------------------------------------------------------ scripting

    private AgentProcess startAgent(String... extraArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--node",
                "node-1",
                "--control-plane",
                "127.0.0.1:" + CP_PORT,
                "--nfqueue-id",
                "9",
                "--metrics-bind-address",
                "127.0.0.1:" + METRICS_PORT,
                "--inspect-listen",
                "127.0.0.1:" + INSPECT_PORT,
                "--auth",
                "none"));
        args.addAll(List.of(extraArgs));
        AgentProcess agent = AgentProcess.start(pods.node.name(), args);
        agents.add(agent);
        return agent;
    }

    private ScriptedControlPlane.Stream streamOf(AgentProcess agent) throws Exception {
        ScriptedControlPlane.Stream stream = cp.pollStream(60_000);
        if (stream == null) {
            throw new AssertionError("agent opened no Sync stream within 60 s; its log:\n" + agent.log());
        }
        return stream;
    }

    private void awaitApplied(AgentProcess agent, long sequence) throws Exception {
        try {
            cp.awaitReport(sequence);
        } catch (AssertionError e) {
            throw new AssertionError("agent did not report sequence " + sequence + "; its log:\n" + agent.log(), e);
        }
    }

    private static PortMatch port(Protocol protocol, int port) {
        return PortMatch.newBuilder().setProtocol(protocol).setPort(port).build();
    }

    /** b's ingress policy: allow the members of set pods-a on these ports. */
    private static ToAgent policy(long seq, PortMatch... ports) {
        return ToAgent.newBuilder()
                .setSequence(seq)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(Messages.policyId(POLICY))
                        .setPolicy(Policy.newBuilder()
                                .addInboundRules(Rule.newBuilder()
                                        .setAction(Action.ALLOW)
                                        .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                                        .addAllPorts(List.of(ports))
                                        .setRuleId("ingress[0]"))))
                .build();
    }

    private static ToAgent dualStack(ToAgent endpointUpdate, String ip6) {
        ToAgent.Builder b = endpointUpdate.toBuilder();
        b.getWorkloadEndpointUpdateBuilder().getEndpointBuilder().addIps(ip6);
        return b.build();
    }

    private static final PortMatch[] ALL_PORTS = {
        port(Protocol.TCP, TCP_KEPT),
        port(Protocol.TCP, TCP_DENIED),
        port(Protocol.UDP, UDP_KEPT),
        port(Protocol.UDP, UDP_DENIED),
        port(Protocol.SCTP, SCTP_PORT)
    };
    private static final PortMatch[] KEPT_PORTS = {port(Protocol.TCP, TCP_KEPT), port(Protocol.UDP, UDP_KEPT)};

    /** A full state on a new stream: a and b dual-stack, b isolated for ingress (unless bSelected is false). */
    private static long sendState(ScriptedControlPlane.Stream stream, boolean bSelected, PortMatch... ports) {
        ToAgent b = bSelected ? endpoint(4, "x", "b", PodPair.B_IP, POLICY) : endpoint(4, "x", "b", PodPair.B_IP);
        stream.send(
                ipSet(1, "pods-a", PodPair.A_IP, PodPair.A_IP6),
                policy(2, ports),
                dualStack(endpoint(3, "x", "a", PodPair.A_IP), PodPair.A_IP6),
                dualStack(b, PodPair.B_IP6),
                inSync(5));
        return 5;
    }

    private LongLivedFlow flow(Kind kind, String host, int port) throws Exception {
        LongLivedFlow f = LongLivedFlow.open(kind, pods.a.inside(), host, port);
        closeables.add(f);
        assertThat(f.awaitEchoes(10, 10_000)).as("flow running: %s", f).isTrue();
        return f;
    }

    private static void assertCut(LongLivedFlow f, AgentProcess agent) throws Exception {
        assertThat(f.awaitStopped(QUIET_MILLIS, CUT_TIMEOUT_MILLIS))
                .as("cut: %s\n%s", f, agent.log())
                .isTrue();
        long echoed = f.echoed();
        Thread.sleep(QUIET_MILLIS);
        assertThat(f.echoed())
                .as("nothing gets through a cut connection: %s", f)
                .isEqualTo(echoed);
    }

    private static void assertKeptGoing(LongLivedFlow f, long lostBefore) throws Exception {
        assertThat(f.awaitEchoes(25, 10_000)).as("still flowing: %s", f).isTrue();
        assertThat(f.failure()).as("%s", f).isNull();
        assertThat(f.lost()).as("no message lost or late: %s", f).isEqualTo(lostBefore);
    }

    private String metrics() throws Exception {
        return pods.node.exec("curl", "-s", "http://127.0.0.1:" + METRICS_PORT + "/metrics");
    }

    private static double metric(String text, String series) {
        for (String line : text.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length()).trim());
            }
        }
        return -1;
    }

    /**
     * Waits until the agent has finished at least n re-judging passes and has no endpoint pending:
     * its metrics then count the work of exactly those passes.
     */
    private void awaitPasses(double n, AgentProcess agent) throws Exception {
        long deadline = System.currentTimeMillis() + CUT_TIMEOUT_MILLIS;
        while (true) {
            String m = metrics();
            if (metric(m, "kubeverdict_conntrack_rejudge_seconds_count") >= n
                    && metric(m, "kubeverdict_conntrack_endpoints_pending") == 0) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("fewer than " + n + " re-judging passes finished:\n" + m + "\n" + agent.log());
            }
            Thread.sleep(50);
        }
    }

    /** The node's conntrack entries with the CUT bit, as "proto source sport dport" (original direction). */
    private List<String> cutEntries() throws Exception {
        String listing = pods.node
                        .tryExec("conntrack", "-L", "-f", "ipv4", "-m", FlowMarks.CUT + "/" + FlowMarks.CUT)
                        .output()
                + pods.node
                        .tryExec("conntrack", "-L", "-f", "ipv6", "-m", FlowMarks.CUT + "/" + FlowMarks.CUT)
                        .output();
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^(\\w+)\\s.*?src=(\\S+) dst=\\S+ sport=(\\d+) dport=(\\d+)")
                .matcher(listing);
        while (m.find()) {
            out.add(m.group(1) + " " + m.group(2) + " " + m.group(3) + " " + m.group(4));
        }
        return out;
    }

    /** WatchVerdicts (denials) over a channel whose socket lives in the node namespace. */
    private BlockingQueue<Explanation> watchDenials() throws Exception {
        EventLoopGroup loops = NetnsEventLoops.group(pods.node.path(), 1);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", INSPECT_PORT)
                .usePlaintext()
                .directExecutor() // no shared gRPC threads started from the namespace
                .eventLoopGroup(loops)
                .channelFactory(() -> {
                    try {
                        return Netns.call(pods.node.path(), NioSocketChannel::new);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .build();
        closeables.add(() -> loops.shutdownGracefully(0, 1, TimeUnit.SECONDS));
        closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
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
        // registered before the change: the agent counts the stream once it is open
        long deadline = System.currentTimeMillis() + 30_000;
        while (metric(metrics(), "kubeverdict_agent_verdict_watch_streams") < 1) {
            assertThat(System.currentTimeMillis())
                    .as("the WatchVerdicts stream opens")
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
        return denials;
    }

    private static List<Explanation> cutsWithin(BlockingQueue<Explanation> denials, int atLeast)
            throws InterruptedException {
        List<Explanation> cuts = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (cuts.size() < atLeast && System.currentTimeMillis() < deadline) {
            Explanation e = denials.poll(100, TimeUnit.MILLISECONDS);
            if (e != null && e.hasCut()) {
                cuts.add(e);
            }
        }
        return cuts;
    }

    // ------------------------------------------------------------------ tests

    @Test
    void aChangeCutsTheConnectionsItDeniesAndNothingElse() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendState(stream, true, ALL_PORTS);
        awaitApplied(agent, seq);

        LongLivedFlow tcpKept = flow(Kind.TCP, PodPair.B_IP, TCP_KEPT);
        LongLivedFlow tcpDenied = flow(Kind.TCP, PodPair.B_IP, TCP_DENIED);
        LongLivedFlow udpKept = flow(Kind.UDP, PodPair.B_IP, UDP_KEPT);
        LongLivedFlow udpDenied = flow(Kind.UDP, PodPair.B_IP, UDP_DENIED);
        LongLivedFlow tcp6Denied = flow(Kind.TCP, PodPair.B_IP6, TCP_DENIED);
        BlockingQueue<Explanation> denials = watchDenials();
        long udpLost = udpKept.lost();

        // Only TCP 8080 and UDP 9000 stay allowed.
        stream.send(policy(++seq, KEPT_PORTS));
        awaitApplied(agent, seq);

        assertCut(tcpDenied, agent);
        assertCut(udpDenied, agent);
        assertCut(tcp6Denied, agent);
        assertKeptGoing(tcpKept, 0);
        assertKeptGoing(udpKept, udpLost);

        List<Explanation> cuts = cutsWithin(denials, 3);
        assertThat(cuts).as("each cut in WatchVerdicts").hasSize(3);
        for (Explanation cut : cuts) {
            assertThat(cut.getVerdict()).isEqualTo(Verdict.VERDICT_DENY);
            assertThat(cut.getTuple().getSrcIp()).isIn(PodPair.A_IP, PodPair.A_IP6);
            assertThat(cut.getTuple().getDstPort()).isIn(TCP_DENIED, UDP_DENIED);
            assertThat(cut.getDestination().getPod()).isEqualTo("b");
            assertThat(cut.getIngress().getReason())
                    .as("the deciding policy's default")
                    .contains("no rule matched");
            assertThat(cut.getCut().getAction()).isEqualTo("drop");
            assertThat(cut.getCut().getAppliedSequence()).isEqualTo(seq);
            assertThat(cut.getCut().getSrcPort())
                    .isIn(tcpDenied.localPort(), udpDenied.localPort(), tcp6Denied.localPort());
        }
        assertThat(cutEntries())
                .as("exactly the denied connections carry the cut mark")
                .containsExactlyInAnyOrder(
                        "tcp " + PodPair.A_IP + " " + tcpDenied.localPort() + " " + TCP_DENIED,
                        "udp " + PodPair.A_IP + " " + udpDenied.localPort() + " " + UDP_DENIED,
                        "tcp " + PodPair.A_IP6 + " " + tcp6Denied.localPort() + " " + TCP_DENIED);

        String metrics = metrics();
        assertThat(metric(metrics, "kubeverdict_conntrack_flows_cut_total{protocol=\"tcp\"}"))
                .isEqualTo(2);
        assertThat(metric(metrics, "kubeverdict_conntrack_flows_cut_total{protocol=\"udp\"}"))
                .isEqualTo(1);
        assertThat(metric(metrics, "kubeverdict_conntrack_flows_examined_total"))
                .isGreaterThanOrEqualTo(5);
        assertThat(metric(metrics, "kubeverdict_conntrack_cut_latency_seconds_count"))
                .isEqualTo(3);
        assertThat(metric(metrics, "kubeverdict_conntrack_endpoints_pending")).isZero();
        assertThat(metrics).contains("kubeverdict_conntrack_cut_latency_seconds_bucket{le=\"1.0\"}");

        // New connections to the denied ports are refused; reverting lets them through again.
        assertThat(pods.canConnect(TCP_DENIED, 1500))
                .as("new connection denied")
                .isFalse();
        stream.send(policy(++seq, ALL_PORTS));
        awaitApplied(agent, seq);
        assertThat(pods.canConnect(TCP_DENIED, 3000))
                .as("reverted: new connections pass\n%s", agent.log())
                .isTrue();
        flow(Kind.UDP, PodPair.B_IP, UDP_DENIED);
        assertKeptGoing(tcpKept, 0);
    }

    @Test
    void connectionsOpenedBeforeAnyPolicySelectedThePodAreJudgedByTheFirst() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendState(stream, false, ALL_PORTS);
        awaitApplied(agent, seq);

        // b is selected by nothing: these are never queued and carry no mark.
        LongLivedFlow tcpKept = flow(Kind.TCP, PodPair.B_IP, TCP_KEPT);
        LongLivedFlow tcpDenied = flow(Kind.TCP, PodPair.B_IP, TCP_DENIED);
        LongLivedFlow udpDenied = flow(Kind.UDP, PodPair.B_IP, UDP_DENIED);
        // The node's own connection to b (a kubelet probe, say): never judged, so never cut.
        Socket fromNode = Netns.call(pods.node.path(), () -> new Socket(PodPair.B_IP, TCP_DENIED));
        closeables.add(fromNode);
        long lost = tcpKept.lost();

        stream.send(
                dualStack(endpoint(++seq, "x", "b", PodPair.B_IP, POLICY), PodPair.B_IP6), policy(++seq, KEPT_PORTS));
        awaitApplied(agent, seq);

        assertCut(tcpDenied, agent);
        assertCut(udpDenied, agent);
        assertKeptGoing(tcpKept, lost);
        assertThat(PodPair.echoes(fromNode))
                .as("the node's own connection is not the policy's")
                .isTrue();
        assertThat(cutEntries()).hasSize(2);
    }

    @Test
    void aPeerLeavingTheAllowedSetLosesItsConnections() throws Exception {
        AgentProcess agent = startAgent("--cut-action", "reset");
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendState(stream, true, ALL_PORTS);
        awaitApplied(agent, seq);
        LongLivedFlow tcp = flow(Kind.TCP, PodPair.B_IP, TCP_KEPT);
        LongLivedFlow tcp6 = flow(Kind.TCP, PodPair.B_IP6, TCP_KEPT);
        LongLivedFlow udp6 = flow(Kind.UDP, PodPair.B_IP6, UDP_KEPT);

        // a's labels change: it leaves the set the policy allows (ports unchanged).
        stream.send(ipSet(++seq, "pods-a", "10.77.9.9"));
        awaitApplied(agent, seq);

        assertCut(tcp, agent);
        assertCut(tcp6, agent);
        assertCut(udp6, agent);
        // --cut-action reset: the TCP ends that send learn at once
        assertThat(tcp.failure()).as("reset: %s", tcp).contains("reset");
        assertThat(tcp6.failure()).as("reset: %s", tcp6).contains("reset");
        assertThat(cutEntries()).hasSize(3);
    }

    @Test
    void ofAThousandEstablishedConnectionsExactlyTheTenAChangeDeniesAreCut() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        // b admits a on TCP 8080 and 8081; c (another local pod, no namespace) admits anyone.
        Policy cPolicy = Policy.newBuilder()
                .addInboundRules(Rule.newBuilder()
                        .setAction(Action.ALLOW)
                        .setAllPeers(true)
                        .setRuleId("ingress[0]"))
                .build();
        stream.send(
                ipSet(1, "pods-a", PodPair.A_IP),
                policy(2, port(Protocol.TCP, TCP_KEPT), port(Protocol.TCP, TCP_DENIED)),
                ToAgent.newBuilder()
                        .setSequence(3)
                        .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                                .setId(Messages.policyId("x/c-open"))
                                .setPolicy(cPolicy))
                        .build(),
                endpoint(4, "x", "a", PodPair.A_IP),
                endpoint(5, "x", "b", PodPair.B_IP, POLICY),
                endpoint(6, "x", "c", "10.77.1.3", "x/c-open"),
                inSync(7));
        long seq = 7;
        awaitApplied(agent, seq);
        awaitPasses(1, agent); // the first state's pass, over every selected endpoint

        // 1000 real, established connections from a to b, each admitted by the agent: 990 to 8080, 10 to 8081.
        List<Socket> kept = new ArrayList<>();
        List<Socket> denied = new ArrayList<>();
        pods.a.inside().call(() -> {
            for (int i = 0; i < 1000; i++) {
                Socket s = new Socket();
                closeables.add(s);
                s.connect(new InetSocketAddress(PodPair.B_IP, i < 10 ? TCP_DENIED : TCP_KEPT), 5000);
                s.setSoTimeout(5000);
                (i < 10 ? denied : kept).add(s);
            }
            return null;
        });
        for (Socket s : kept.subList(0, 20)) {
            assertThat(PodPair.echoes(s)).as("an established connection echoes").isTrue();
        }
        for (Socket s : denied) {
            assertThat(PodPair.echoes(s)).as("an established connection echoes").isTrue();
        }
        // 500 more admitted entries of c's, which the change does not affect (c has no namespace to connect to).
        List<String> commands = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            commands.add("-I -p tcp -s " + PodPair.A_IP + " -d 10.77.1.3 --sport " + (40000 + i) + " --dport 8080"
                    + " --state ESTABLISHED -t 600 -u ASSURED -m " + FlowMarks.ADMITTED);
        }
        Path file = Files.createTempFile("kvt-ec", ".txt");
        try {
            Files.write(file, commands);
            pods.node.exec("conntrack", "-R", file.toString());
        } finally {
            Files.delete(file);
        }
        String before = metrics();
        double examinedBefore = metric(before, "kubeverdict_conntrack_flows_examined_total");
        double passesBefore = metric(before, "kubeverdict_conntrack_rejudge_seconds_count");

        stream.send(policy(++seq, port(Protocol.TCP, TCP_KEPT))); // b no longer admits 8081
        awaitApplied(agent, seq);
        awaitPasses(passesBefore + 1, agent);
        List<String> expected = new ArrayList<>();
        for (Socket s : denied) {
            expected.add("tcp " + PodPair.A_IP + " " + s.getLocalPort() + " " + TCP_DENIED);
        }
        long deadline = System.currentTimeMillis() + CUT_TIMEOUT_MILLIS;
        while (cutEntries().size() < expected.size() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertThat(cutEntries())
                .as("exactly the 10 connections to 8081 carry the cut mark\n%s", agent.log())
                .containsExactlyInAnyOrderElementsOf(expected);

        // On the wire: every one of the 990 still echoes, none of the 10 does.
        List<Integer> silent = new ArrayList<>();
        for (Socket s : kept) {
            if (!PodPair.echoes(s)) {
                silent.add(s.getLocalPort());
            }
        }
        assertThat(silent).as("kept connections that no longer echo").isEmpty();
        for (Socket s : denied) {
            s.setSoTimeout(300);
            assertThat(PodPair.echoes(s))
                    .as("a cut connection echoes nothing (port %d)", s.getLocalPort())
                    .isFalse();
        }

        String metrics = metrics();
        assertThat(metric(metrics, "kubeverdict_conntrack_flows_cut_total{protocol=\"tcp\"}"))
                .isEqualTo(10);
        // b's 1000 connections were judged again; c's 500 were not even delivered by the kernel.
        double examined = metric(metrics, "kubeverdict_conntrack_flows_examined_total") - examinedBefore;
        assertThat(examined).as("only the affected endpoint's connections").isBetween(1000.0, 1010.0);
        String admitted = pods.node
                .tryExec("conntrack", "-L", "-d", "10.77.1.3", "-m", FlowMarks.ADMITTED + "/" + FlowMarks.OURS)
                .output();
        assertThat(admitted).contains("500 flow entries");
    }

    @Test
    void aRestartedAgentCutsWhatItsStateDeniesAfterInSync() throws Exception {
        AgentProcess first = startAgent("--fail-open");
        long seq = sendState(streamOf(first), true, ALL_PORTS);
        awaitApplied(first, seq);
        LongLivedFlow admitted = flow(Kind.TCP, PodPair.B_IP, TCP_DENIED);
        LongLivedFlow kept = flow(Kind.UDP, PodPair.B_IP, UDP_KEPT);

        first.kill();
        // Fail-open and down: a new connection passes unchecked (bypass), established ones go on.
        LongLivedFlow unchecked = flow(Kind.UDP, PodPair.B_IP, UDP_DENIED);
        assertThat(admitted.awaitEchoes(10, 5000))
                .as("established connections are untouched while the agent is down")
                .isTrue();
        long lost = kept.lost();

        AgentProcess second = startAgent("--fail-open");
        ScriptedControlPlane.Stream stream = streamOf(second);
        // Connected, not in sync: it has no state to judge by, so nothing is cut yet.
        assertThat(admitted.awaitEchoes(10, 5000))
                .as("untouched before InSync: %s", admitted)
                .isTrue();
        seq = sendState(stream, true, KEPT_PORTS); // the state changed while the agent was away
        awaitApplied(second, seq);

        assertCut(admitted, second);
        assertCut(unchecked, second);
        assertKeptGoing(kept, lost);
    }

    @Test
    void sctpAssociationsAreCutToo() throws Exception {
        AgentProcess agent = startAgent();
        ScriptedControlPlane.Stream stream = streamOf(agent);
        long seq = sendState(stream, true, ALL_PORTS);
        awaitApplied(agent, seq);
        // This kernel has no SCTP sockets: crafted INITs from a, counted where they arrive in b.
        pods.b.exec(
                "nft",
                "add table inet kvt_count; add chain inet kvt_count in { type filter hook input priority 0; }; "
                        + "add rule inet kvt_count in meta l4proto sctp counter");
        byte[] init = Crafted.ipv4(132, PodPair.A_IP, PodPair.B_IP, Crafted.sctpInit(5000, SCTP_PORT));
        RawSender.send(pods.a, 4, PodPair.B_IP, init);
        assertThat(awaitSctpArrivals(1))
                .as("the association's INIT admitted\n%s", agent.log())
                .isEqualTo(1);

        stream.send(policy(++seq, KEPT_PORTS));
        awaitApplied(agent, seq);
        long deadline = System.currentTimeMillis() + CUT_TIMEOUT_MILLIS;
        while (cutEntries().isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        assertThat(cutEntries())
                .as("the association is cut\n%s", agent.log())
                .containsExactly("sctp " + PodPair.A_IP + " 5000 " + SCTP_PORT);
        RawSender.send(pods.a, 4, PodPair.B_IP, init); // its retransmission
        Thread.sleep(500);
        assertThat(awaitSctpArrivals(1)).as("nothing more of it arrives").isEqualTo(1);
    }

    private long awaitSctpArrivals(long expected) throws Exception {
        long deadline = System.currentTimeMillis() + 5000;
        long n;
        do {
            Matcher m = Pattern.compile("counter packets (\\d+)")
                    .matcher(pods.b.exec("nft", "list", "table", "inet", "kvt_count"));
            n = m.find() ? Long.parseLong(m.group(1)) : -1;
            if (n >= expected) {
                return n;
            }
            Thread.sleep(50);
        } while (System.currentTimeMillis() < deadline);
        return n;
    }
}
