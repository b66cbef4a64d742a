// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.conntrack;

import static io.kubeverdict.agent.testing.Messages.endpoint;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.ipSet;

import io.kubeverdict.agent.nft.FlowMarks;
import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.Messages;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.jni.Conntrack;
import io.kubeverdict.jni.ConntrackEntries;
import io.kubeverdict.jni.ConntrackQuery;
import io.kubeverdict.jni.NetnsThread;
import io.kubeverdict.policy.IpAddress;
import io.kubeverdict.proto.v1.Action;
import io.kubeverdict.proto.v1.ActivePolicyUpdate;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Policy;
import io.kubeverdict.proto.v1.PortMatch;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.proto.v1.Rule;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.testing.flow.LongLivedFlow;
import io.kubeverdict.testing.flow.LongLivedFlow.Kind;
import io.kubeverdict.testing.flow.UdpEchoServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Benchmark, not a test (never run by Maven): how fast established connections stop once a change
 * denies them, and what re-judging costs when the conntrack table is full of unrelated entries.
 * The real agent process in a node namespace between pods a and b, a scripted control plane.
 *
 * <p>Part 1, per round: a TCP echo and a UDP flow (one message per 2 ms) from a to b run; the
 * change that denies their ports is sent (T0); a prober opens new connections to the denied TCP
 * port back to back. Reported, from T0: ReportApplied received, the first refused new
 * connection (start of the first attempt that got no answer), and the last byte delivered on
 * each cut connection. Then the policy is reverted for the next round.
 *
 * <p>Part 2: N unrelated conntrack entries (half unmarked, half ADMITTED of addresses that are
 * no endpoint of the change) are inserted into the node's table; then, per round, 10 admitted
 * connections of b are inserted and a change denying them is applied. Reported from the agent's
 * metrics: entries the kernel delivered per change, connections examined, pass time.
 *
 * <pre>
 * ./mvnw -o -B -q -pl dataplane-jni -am test-compile
 * ./mvnw -o -B -q -pl dataplane-jni dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/kv-cp.txt
 * java --enable-native-access=ALL-UNNAMED -cp dataplane-jni/target/test-classes:dataplane-jni/target/classes:$(cat /tmp/kv-cp.txt) \
 *     io.kubeverdict.agent.conntrack.CutBenchmark [--rounds 20] [--unrelated 1000,100000] [--cost-rounds 10]
 * </pre>
 * Needs root. Its namespaces (kvb-cut-*) and the agent go at the end, also on failure.
 */
public final class CutBenchmark {
    private static final int CP_PORT = 19390;
    private static final int METRICS_PORT = 19301;
    private static final int TCP_KEPT = 8080;
    private static final int TCP_CUT = 8081;
    private static final int UDP_CUT = 9001;
    private static final String POLICY = "x/b-ingress";

    private final PodPair pods;
    private final ScriptedControlPlane cp;
    private final AgentProcess agent;
    private final ScriptedControlPlane.Stream stream;
    private long seq;

    private CutBenchmark(PodPair pods, ScriptedControlPlane cp, AgentProcess agent) throws Exception {
        this.pods = pods;
        this.cp = cp;
        this.agent = agent;
        ScriptedControlPlane.Stream s = cp.pollStream(60_000);
        if (s == null) {
            throw new IllegalStateException("no Sync stream from the agent; its log:\n" + agent.log());
        }
        this.stream = s;
    }

    public static void main(String[] args) throws Exception {
        int rounds = 20;
        int costRounds = 10;
        int[] unrelated = {1000, 100_000};
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--cost-rounds" -> costRounds = Integer.parseInt(args[++i]);
                case "--unrelated" ->
                    unrelated = Arrays.stream(args[++i].split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (PodPair pods = PodPair.create("kvb-cut")) {
            pods.echoServerOnB(TCP_KEPT);
            pods.echoServerOnB(TCP_CUT);
            try (UdpEchoServer udp = UdpEchoServer.start(pods.b.inside(), UDP_CUT);
                    ScriptedControlPlane cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
                    AgentProcess agent = AgentProcess.start(
                            pods.node.name(),
                            List.of(
                                    "--node",
                                    "node-1",
                                    "--control-plane",
                                    "127.0.0.1:" + CP_PORT,
                                    "--nfqueue-id",
                                    "11",
                                    "--metrics-bind-address",
                                    "127.0.0.1:" + METRICS_PORT,
                                    "--inspect-listen",
                                    "off",
                                    "--auth",
                                    "none"))) {
                pods.awaitConnectivity(TCP_CUT);
                CutBenchmark bench = new CutBenchmark(pods, cp, agent);
                bench.start();
                System.out.printf("load average at start: %s%n", loadAverage());
                if (rounds > 0) {
                    bench.latency(rounds);
                }
                for (int n : unrelated) {
                    bench.cost(n, costRounds);
                }
                System.out.printf("load average at end: %s%n", loadAverage());
            }
        }
    }

    private static String loadAverage() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).strip();
    }

    private static PortMatch port(Protocol protocol, int port) {
        return PortMatch.newBuilder().setProtocol(protocol).setPort(port).build();
    }

    private ToAgent policy(boolean allowCut) {
        Rule.Builder rule = Rule.newBuilder()
                .setAction(Action.ALLOW)
                .addPeers(Peer.newBuilder().setIpSetId("pods-a"))
                .addPorts(port(Protocol.TCP, TCP_KEPT))
                .setRuleId("ingress[0]");
        if (allowCut) {
            rule.addPorts(port(Protocol.TCP, TCP_CUT)).addPorts(port(Protocol.UDP, UDP_CUT));
        }
        return ToAgent.newBuilder()
                .setSequence(++seq)
                .setActivePolicyUpdate(ActivePolicyUpdate.newBuilder()
                        .setId(Messages.policyId(POLICY))
                        .setPolicy(Policy.newBuilder().addInboundRules(rule)))
                .build();
    }

    private void start() throws Exception {
        stream.send(
                ipSet(1, "pods-a", PodPair.A_IP),
                endpoint(2, "x", "a", PodPair.A_IP),
                endpoint(3, "x", "b", PodPair.B_IP, POLICY));
        seq = 3;
        stream.send(policy(true), inSync(++seq));
        cp.awaitReport(seq);
    }

    /** Applies one change; returns nanoTime when it was handed to the stream. */
    private long change(boolean allowCut) throws Exception {
        ToAgent message = policy(allowCut);
        long t0 = System.nanoTime();
        stream.send(message);
        cp.awaitReport(message.getSequence());
        return t0;
    }

    // ------------------------------------------------------------------ part 1

    private void latency(int rounds) throws Exception {
        List<Double> applied = new ArrayList<>();
        List<Double> refused = new ArrayList<>();
        List<Double> tcpLast = new ArrayList<>();
        List<Double> udpLast = new ArrayList<>();
        List<Double> tcpAfterRefused = new ArrayList<>();
        for (int round = 0; round <= rounds; round++) { // round 0 warms up
            try (LongLivedFlow tcp = LongLivedFlow.open(Kind.TCP, pods.a.inside(), PodPair.B_IP, TCP_CUT, 2);
                    LongLivedFlow udp = LongLivedFlow.open(Kind.UDP, pods.a.inside(), PodPair.B_IP, UDP_CUT, 2)) {
                if (!tcp.awaitEchoes(50, 10_000) || !udp.awaitEchoes(50, 10_000)) {
                    throw new IllegalStateException("flows did not start: " + tcp + "; " + udp + "\n" + agent.log());
                }
                Prober prober = new Prober();
                ScriptedControlPlane.Stream s = stream;
                ToAgent message = policy(false);
                long t0 = System.nanoTime();
                prober.start(t0);
                s.send(message);
                cp.awaitReport(message.getSequence());
                long reported = System.nanoTime();
                if (!tcp.awaitStopped(1000, 15_000) || !udp.awaitStopped(1000, 15_000)) {
                    throw new IllegalStateException("not cut: " + tcp + "; " + udp + "\n" + agent.log());
                }
                long firstRefused = prober.awaitFirstRefused(15_000);
                prober.stop();
                if (round > 0) {
                    applied.add(ms(reported - t0));
                    refused.add(ms(firstRefused - t0));
                    tcpLast.add(ms(tcp.lastEchoNanos() - t0));
                    udpLast.add(ms(udp.lastEchoNanos() - t0));
                    tcpAfterRefused.add(ms(tcp.lastEchoNanos() - firstRefused));
                }
            }
            change(true);
        }
        System.out.printf(
                "%nPart 1: %d rounds, ms after the change was handed to the control plane's stream%n", rounds);
        System.out.printf("%-44s %8s %8s %8s %8s%n", "", "p50", "p99", "min", "max");
        row("ReportApplied received", applied);
        row("first refused new TCP connection (start)", refused);
        row("last byte delivered, cut TCP connection", tcpLast);
        row("last byte delivered, cut UDP flow", udpLast);
        row("last TCP byte minus first refusal", tcpAfterRefused);
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static void row(String name, List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        System.out.printf(
                Locale.ROOT,
                "%-44s %8.1f %8.1f %8.1f %8.1f%n",
                name,
                quantile(v, 0.5),
                quantile(v, 0.99),
                v[0],
                v[v.length - 1]);
    }

    /** Nearest-rank quantile. */
    private static double quantile(double[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /**
     * New connections to the port the change denies, back to back from a thread inside pod a's
     * namespace (sockets made there directly, so an attempt's start is its SYN's); remembers the
     * start of the first that got no answer.
     */
    private final class Prober {
        private final AtomicLong firstRefused = new AtomicLong();
        private volatile boolean running = true;
        private NetnsThread thread;
        private Future<?> work;

        void start(long t0) throws Exception {
            thread = new NetnsThread(pods.a.path());
            ExecutorService runner = Executors.newSingleThreadExecutor();
            work = runner.submit(() -> thread.call(() -> {
                while (running && firstRefused.get() == 0) {
                    long start = System.nanoTime();
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress(PodPair.B_IP, TCP_CUT), 150);
                    } catch (IOException e) {
                        if (start >= t0) {
                            firstRefused.compareAndSet(0, start);
                        }
                    }
                }
                return null;
            }));
            runner.shutdown();
        }

        long awaitFirstRefused(long timeoutMillis) throws InterruptedException {
            long deadline = System.currentTimeMillis() + timeoutMillis;
            while (firstRefused.get() == 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(5);
            }
            if (firstRefused.get() == 0) {
                throw new IllegalStateException("no new connection was refused");
            }
            return firstRefused.get();
        }

        void stop() throws Exception {
            running = false;
            work.get(5, TimeUnit.SECONDS);
            thread.close();
        }
    }

    // ------------------------------------------------------------------ part 2

    private void cost(int unrelated, int rounds) throws Exception {
        pods.node.exec("conntrack", "-F");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < unrelated; i++) {
            int mark = i % 2 == 0 ? 0 : FlowMarks.ADMITTED;
            lines.add("-I -p tcp -s 10." + (100 + i / 65536) + "." + (i / 256 % 256) + "." + (i % 256)
                    + " -d 10.99.0.1 --sport " + (1024 + i % 60000)
                    + " --dport 443 --state ESTABLISHED -t 3600 -u ASSURED -m " + mark);
        }
        insert(lines);
        String count = pods.node.exec("conntrack", "-C").strip();
        List<Double> passMillis = new ArrayList<>();
        List<Double> received = new ArrayList<>();
        List<Double> examined = new ArrayList<>();
        List<Double> cut = new ArrayList<>();
        for (int round = 0; round <= rounds; round++) {
            List<String> flows = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                flows.add("-I -p tcp -s " + PodPair.A_IP + " -d " + PodPair.B_IP + " --sport "
                        + (50000 + round * 10 + k) + " --dport " + TCP_CUT
                        + " --state ESTABLISHED -t 600 -u ASSURED -m " + FlowMarks.ADMITTED);
            }
            insert(flows);
            Metrics before = Metrics.read(this);
            change(false);
            Metrics after = Metrics.await(this, before, 10);
            if (round > 0) {
                passMillis.add((after.passSeconds - before.passSeconds) / (after.passes - before.passes) * 1000);
                received.add(after.received - before.received);
                examined.add(after.examined - before.examined);
                cut.add(after.cut - before.cut);
            }
            Metrics reverted = Metrics.read(this);
            change(true);
            Metrics.await(this, reverted, 0); // its pass is over before the next round counts
        }
        System.out.printf(
                "%nPart 2: %d unrelated entries (node table: %s entries, agent's gauge: %.0f), %d changes that each cut 10 connections of b%n",
                unrelated, count, metric("kubeverdict_conntrack_entries"), rounds);
        System.out.printf("%-44s %8s %8s %8s %8s%n", "", "p50", "p99", "min", "max");
        row("entries the kernel delivered per change", received);
        row("connections examined per change", examined);
        row("connections cut per change", cut);
        row("re-judging pass, ms (both dumps + 10 cuts)", passMillis);
        row("one filtered dump (b, ADMITTED, not CUT), ms", dumpMillis(20));
    }

    /** The kernel's side alone: b's admitted connections dumped from this process, timed. */
    private List<Double> dumpMillis(int times) throws Exception {
        try (NetnsThread node = new NetnsThread(pods.node.path())) {
            return node.call(() -> {
                List<Double> out = new ArrayList<>();
                try (Conntrack ct = new Conntrack()) {
                    ConntrackEntries into = new ConntrackEntries(1024);
                    ConntrackQuery q = ConntrackQuery.of(
                            IpAddress.parse(PodPair.B_IP),
                            ConntrackQuery.Match.REPLY_SOURCE,
                            FlowMarks.ADMITTED,
                            FlowMarks.OURS);
                    for (int i = 0; i <= times; i++) {
                        long start = System.nanoTime();
                        ct.dump(q, into);
                        if (i > 0) {
                            out.add(ms(System.nanoTime() - start));
                        }
                    }
                }
                return out;
            });
        }
    }

    private void insert(List<String> commands) throws Exception {
        Path file = Files.createTempFile("kvb-cut", ".txt");
        try {
            Files.write(file, commands);
            pods.node.exec("conntrack", "-R", file.toString());
        } finally {
            Files.delete(file);
        }
    }

    private String scrape() throws Exception {
        return pods.node.exec("curl", "-s", "http://127.0.0.1:" + METRICS_PORT + "/metrics");
    }

    private double metric(String series) throws Exception {
        return metric(scrape(), series);
    }

    private static double metric(String text, String series) {
        for (String line : text.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length()).trim());
            }
        }
        return 0;
    }

    /** The agent's conntrack counters at one scrape. */
    private record Metrics(double received, double examined, double cut, double passes, double passSeconds) {
        static Metrics read(CutBenchmark b) throws Exception {
            String t = b.scrape();
            return new Metrics(
                    metric(t, "kubeverdict_conntrack_entries_received_total"),
                    metric(t, "kubeverdict_conntrack_flows_examined_total"),
                    metric(t, "kubeverdict_conntrack_flows_cut_total{protocol=\"tcp\"}"),
                    metric(t, "kubeverdict_conntrack_rejudge_seconds_count"),
                    metric(t, "kubeverdict_conntrack_rejudge_seconds_sum"));
        }

        /** Waits until the change's cuts show. */
        static Metrics await(CutBenchmark b, Metrics before, int cuts) throws Exception {
            long deadline = System.currentTimeMillis() + 15_000;
            Metrics m;
            do {
                m = read(b);
                if (m.cut - before.cut >= cuts && m.passes > before.passes) {
                    return m;
                }
                Thread.sleep(20);
            } while (System.currentTimeMillis() < deadline);
            throw new IllegalStateException("the change's cuts did not show: " + m + " after " + before);
        }
    }
}
