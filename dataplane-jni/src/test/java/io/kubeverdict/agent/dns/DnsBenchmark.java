// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.dns;

import static io.kubeverdict.agent.testing.Messages.endpointUpdate;
import static io.kubeverdict.agent.testing.Messages.inSync;
import static io.kubeverdict.agent.testing.Messages.policyUpdate;
import static io.kubeverdict.policy.Snapshots.allow;
import static io.kubeverdict.policy.Snapshots.block;
import static io.kubeverdict.policy.Snapshots.domainNames;
import static io.kubeverdict.policy.Snapshots.domains;
import static io.kubeverdict.policy.Snapshots.np;
import static io.kubeverdict.policy.Snapshots.port;

import io.kubeverdict.agent.testing.AgentProcess;
import io.kubeverdict.agent.testing.PodPair;
import io.kubeverdict.agent.testing.ScriptedControlPlane;
import io.kubeverdict.policy.Snapshots;
import io.kubeverdict.proto.v1.ActivePolicy;
import io.kubeverdict.proto.v1.DomainNames;
import io.kubeverdict.proto.v1.Endpoint;
import io.kubeverdict.proto.v1.Peer;
import io.kubeverdict.proto.v1.Protocol;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Benchmark, not a test (never run by plain Maven): what a DNS response's trip through the agent's
 * DNS queue adds to a pod's lookup. The real agent process in a node namespace between pod a (the
 * client) and pod b (a {@link DnsStubServer}); a asks b over one connected UDP socket (an
 * established flow, so the policy queue sees none of the queries), one query at a time, and times
 * each round trip. Two states of the same policy, switched every round and in alternating order
 * (interleaved, same run): WATCH, a's egress has a domainNames rule (its answers are queued and
 * learned from before they are accepted), and BASE, the same policy without that rule (a is not
 * watched: its answers are not queued). The answers cycle over {@code --names} names of
 * *.svc.test, each with its own address and TTL 30: after the first cycle an answer refreshes
 * what a learned, as a pod asking for the same names again does; with {@code --fresh} every query
 * is for a new name with a new address (every watched answer inserts). A state change that stops
 * the watch drops a's learned set, so each WATCH block learns its first cycle anew. Reports p50/p99 of each state
 * in µs, their differences and ratios, and the agent's own hold time (its metric).
 *
 * <p>With {@code --heap N} it measures memory instead: a watched pod asks N distinct names (a new
 * name per query, addresses cycling over 60,000), and the agent's heap after a full GC
 * ({@code jcmd GC.run}, then its {@code jvm_memory_used_bytes{area="heap"}}) is reported at 0, N/10,
 * N/2 and N names, with the learned-set sizes: the learner's tables are bounded, so it stays flat.
 *
 * <pre>
 * ./mvnw -B -pl dataplane-jni -am -Pdns-benchmark -DskipTests verify [-Ddns.args="--rounds 20 --queries 500"]
 * ./mvnw -B -pl dataplane-jni -am -Pdns-benchmark -DskipTests verify -Ddns.args="--heap 1000000"
 * </pre>
 * Needs root. Its namespaces (kvb-dns-*) and the agent go at the end, also on failure.
 */
public final class DnsBenchmark {
    private static final int CP_PORT = 19590;
    private static final int METRICS_PORT = 19501;
    private static final DomainNames NAMES = domainNames("d:bench", "*.svc.test");

    private final PodPair pods;
    private final ScriptedControlPlane cp;
    private final AgentProcess agent;
    private final ScriptedControlPlane.Stream stream;
    private final int names;
    private final boolean fresh;
    private long seq;
    private int next;

    private DnsBenchmark(PodPair pods, ScriptedControlPlane cp, AgentProcess agent, int names, boolean fresh)
            throws Exception {
        this.pods = pods;
        this.cp = cp;
        this.agent = agent;
        this.names = names;
        this.fresh = fresh;
        ScriptedControlPlane.Stream s = cp.pollStream(60_000);
        if (s == null) {
            throw new IllegalStateException("no Sync stream from the agent; its log:\n" + agent.log());
        }
        this.stream = s;
    }

    public static void main(String[] args) throws Exception {
        int rounds = 20;
        int queries = 500;
        int names = 256;
        boolean fresh = false;
        int heapNames = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--queries" -> queries = Integer.parseInt(args[++i]);
                case "--names" -> names = Integer.parseInt(args[++i]);
                case "--fresh" -> fresh = true;
                case "--heap" -> heapNames = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (PodPair pods = PodPair.create("kvb-dns");
                DnsStubServer dns = DnsStubServer.start(pods.b.inside(), DnsBenchmark::answer);
                ScriptedControlPlane cp = ScriptedControlPlane.inNetns(pods.node.path(), CP_PORT);
                AgentProcess agent = AgentProcess.start(
                        pods.node.name(),
                        List.of(
                                "--node",
                                "node-1",
                                "--control-plane",
                                "127.0.0.1:" + CP_PORT,
                                "--nfqueue-id",
                                "31",
                                "--dns-queue-id",
                                "40",
                                "--dns-min-ttl",
                                "1",
                                "--dns-resolvers",
                                PodPair.B_IP + "," + PodPair.B_IP6,
                                "--metrics-bind-address",
                                "127.0.0.1:" + METRICS_PORT,
                                "--inspect-listen",
                                "off",
                                "--auth",
                                "none"))) {
            DnsBenchmark bench = new DnsBenchmark(pods, cp, agent, names, fresh || heapNames > 0);
            System.out.printf("load average at start: %s%n", loadAverage());
            if (heapNames > 0) {
                bench.heap(heapNames, agent.pid());
            } else {
                bench.run(rounds, queries);
            }
            System.out.printf("load average at end: %s%n", loadAverage());
        }
    }

    private static DnsMessages answer(String asked, int qtype) {
        DnsMessages m = DnsMessages.response(asked, qtype);
        String name = asked.toLowerCase(Locale.ROOT);
        if (name.matches("q\\d+\\.svc\\.test") && qtype == DnsStubClient.A) {
            int i = Integer.parseInt(name.substring(1, name.indexOf('.'))) % 60_000;
            m.a(asked, 30, "10.78." + (i / 250) + "." + (1 + i % 250));
        }
        return m;
    }

    private static String loadAverage() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).strip();
    }

    /** a's egress: DNS to b, and (watching) TCP 443 to *.svc.test. */
    private void state(boolean watching) throws Exception {
        List<io.kubeverdict.proto.v1.Rule> rules = new ArrayList<>(List.of(allow(
                "egress[0]",
                List.of(block(PodPair.B_IP + "/32")),
                List.of(port(Protocol.UDP, 53), port(Protocol.TCP, 53)))));
        if (watching) {
            rules.add(allow("egress[1]", List.<Peer>of(domains(NAMES)), List.of(port(Protocol.TCP, 443))));
        }
        ActivePolicy policy = Snapshots.policy("default", "x/a-egress", List.of(), rules);
        Endpoint a = Snapshots.endpoint("x/a", List.of(PodPair.A_IP), np(List.of(), List.of("x/a-egress")));
        if (watching) {
            a = a.toBuilder()
                    .setEndpoint(a.getEndpoint().toBuilder().addDomainWatches(NAMES))
                    .build();
        }
        stream.send(policyUpdate(++seq, policy), endpointUpdate(++seq, a));
        if (seq == 2) {
            stream.send(inSync(++seq));
        }
        cp.awaitReport(seq);
    }

    private void run(int rounds, int queries) throws Exception {
        state(true);
        List<long[]> watch = new ArrayList<>();
        List<long[]> base = new ArrayList<>();
        double dnsWatch = 0;
        double dnsBase = 0;
        try (DatagramSocket socket = pods.a.inside().call(() -> {
            DatagramSocket s = new DatagramSocket();
            s.setSoTimeout(3000);
            s.connect(new InetSocketAddress(PodPair.B_IP, 53));
            return s;
        })) {
            // warm up both paths (JIT, caches; the first cycle of names is learned)
            ask(socket, Math.max(2000, names));
            state(false);
            ask(socket, 2000);
            for (int round = 0; round < rounds; round++) {
                for (int half = 0; half < 2; half++) {
                    boolean watching = (round + half) % 2 == 0;
                    state(watching);
                    double dnsBefore = queued();
                    long[] rtt = ask(socket, queries);
                    double seen = queued() - dnsBefore;
                    if (watching) {
                        watch.add(rtt);
                        dnsWatch += seen;
                    } else {
                        base.add(rtt);
                        dnsBase += seen;
                    }
                }
            }
        }
        String m = metrics();
        long[] w = concat(watch);
        long[] b = concat(base);
        System.out.printf(
                "%n%d rounds x %d queries per state, interleaved; %s%n",
                rounds, queries, fresh ? "a new name and address per query" : names + " names cycling");
        System.out.printf("responses the agent's DNS queue saw: WATCH %.0f, BASE %.0f%n", dnsWatch, dnsBase);
        System.out.printf("%-38s %10s %10s%n", "lookup round trip (us)", "p50", "p99");
        row("BASE (not queued)", q(b, 0.50), q(b, 0.99));
        row("WATCH (queued, learned, accepted)", q(w, 0.50), q(w, 0.99));
        row("added (WATCH - BASE)", q(w, 0.50) - q(b, 0.50), q(w, 0.99) - q(b, 0.99));
        System.out.printf(
                "%-38s %10.2f %10.2f%n", "ratio WATCH / BASE", q(w, 0.50) / q(b, 0.50), q(w, 0.99) / q(b, 0.99));
        double[] perRound = new double[watch.size()];
        for (int r = 0; r < perRound.length; r++) {
            perRound[r] = q(watch.get(r), 0.5) / q(base.get(r), 0.5);
        }
        Arrays.sort(perRound);
        System.out.printf(
                "per-round p50 ratio: median %.2f, min %.2f, max %.2f%n",
                perRound[perRound.length / 2], perRound[0], perRound[perRound.length - 1]);
        double holdCount = metric(m, "kubeverdict_dns_response_hold_seconds_count");
        double holdSum = metric(m, "kubeverdict_dns_response_hold_seconds_sum");
        System.out.printf(
                "agent's hold (batch arrival to verdict) over %.0f responses: mean %.1f us, p50 <= %.1f us,"
                        + " p99 <= %.1f us (histogram bucket bounds)%n",
                holdCount,
                holdSum / holdCount * 1e6,
                bucketBound(m, holdCount, 0.50) * 1e6,
                bucketBound(m, holdCount, 0.99) * 1e6);
        System.out.printf(
                "outcomes: learned %.0f, refreshed %.0f%n",
                metric(m, "kubeverdict_dns_responses_total{outcome=\"learned\"}"),
                metric(m, "kubeverdict_dns_responses_total{outcome=\"refreshed\"}"));
    }

    /** The agent's heap after a full GC at 0, n/10, n/2 and n distinct names learned. */
    private void heap(int n, long agentPid) throws Exception {
        state(true);
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        System.out.printf("%n%12s %14s %16s %14s%n", "names asked", "heap MiB (GC)", "learned addrs", "evictions");
        int asked = 0;
        try (DatagramSocket socket = pods.a.inside().call(() -> {
            DatagramSocket s = new DatagramSocket();
            s.setSoTimeout(3000);
            s.connect(new InetSocketAddress(PodPair.B_IP, 53));
            return s;
        })) {
            for (int target : new int[] {0, n / 10, n / 2, n}) {
                for (; asked < target; asked += 1000) {
                    ask(socket, Math.min(1000, target - asked));
                }
                Process gc = new ProcessBuilder(jcmd, Long.toString(agentPid), "GC.run")
                        .redirectErrorStream(true)
                        .start();
                String out = new String(gc.getInputStream().readAllBytes());
                if (gc.waitFor() != 0) {
                    throw new IllegalStateException("jcmd GC.run failed: " + out);
                }
                String m = metrics();
                double heap = 0;
                for (String line : m.split("\n")) {
                    if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
                        heap += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    }
                }
                System.out.printf(
                        "%12d %14.1f %16.0f %14.0f%n",
                        asked,
                        heap / (1 << 20),
                        metric(m, "kubeverdict_dns_learned_addresses"),
                        sum(m, "kubeverdict_dns_learned_evictions_total"));
            }
        }
    }

    private static double sum(String text, String name) {
        double n = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    private static void row(String label, double p50, double p99) {
        System.out.printf("%-38s %10.1f %10.1f%n", label, p50, p99);
    }

    /** Round trips in ns, one query at a time. */
    private long[] ask(DatagramSocket socket, int n) throws Exception {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            String name = "q" + (fresh ? next++ : next++ % names) + ".svc.test";
            long t0 = System.nanoTime();
            if (DnsStubClient.ask(socket, name, DnsStubClient.A).size() != 1) {
                throw new IllegalStateException("no address for " + name);
            }
            out[i] = System.nanoTime() - t0;
        }
        return out;
    }

    private double queued() throws Exception {
        String m = metrics();
        double n = 0;
        for (String line : m.split("\n")) {
            if (line.startsWith("kubeverdict_dns_responses_total{")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
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
        return Double.NaN;
    }

    /** The upper bound of the hold histogram's first bucket holding the q-quantile (seconds). */
    private static double bucketBound(String text, double count, double q) {
        String prefix = "kubeverdict_dns_response_hold_seconds_bucket{le=\"";
        for (String line : text.split("\n")) {
            if (line.startsWith(prefix)) {
                String le = line.substring(prefix.length(), line.indexOf('"', prefix.length()));
                if (Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)) >= q * count) {
                    return le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                }
            }
        }
        return Double.NaN;
    }

    private static long[] concat(List<long[]> parts) {
        return parts.stream().flatMapToLong(Arrays::stream).toArray();
    }

    /** The q-quantile of sorted ns values, in µs. */
    private static double q(long[] values, double q) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1000.0;
    }
}
