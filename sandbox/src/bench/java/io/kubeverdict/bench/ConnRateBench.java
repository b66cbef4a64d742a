// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import io.kubeverdict.agent.dns.DnsTable;
import io.kubeverdict.agent.nft.NftManager;
import io.kubeverdict.agent.nft.PodAddresses;
import io.kubeverdict.agent.run.AgentConfig;
import io.kubeverdict.agent.verdict.QueueCounters;
import io.kubeverdict.jni.Nftables;
import io.kubeverdict.proto.v1.Protocol;
import io.kubeverdict.sandbox.ManagedProcess;
import io.kubeverdict.sandbox.MetricsText;
import io.kubeverdict.sandbox.Progress;
import io.kubeverdict.sandbox.Sandbox;
import io.kubeverdict.sandbox.SandboxOptions;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.Testbed;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Connection rate and latency between two pods routed through a node, in one run, for: (a) no
 * agent, (a') conntrack switched on only, (b') the agent's table with the pods unselected but no
 * agent, (b) the real agent with no policy selecting the pods, (c) the real agent with a policy
 * selecting and allowing them (first packets through NFQUEUE and the JVM), (d) a minimal C
 * NFQUEUE consumer behind the same table as the agent's.
 *
 * <p>(b) and (c) run in a {@link Sandbox} (real control plane and agent processes; switching
 * between them rewrites the policy file, waits until the sandbox says the agent applied it and
 * then until the node's set shows it). The others run in a second testbed with the identical
 * layout and addresses: (d) is the agent's own table (programmed by {@link NftManager} with client
 * and server in the set) plus the C program bound to the agent's queue number, (b') that table
 * with only the other pod in its set, (b'') the same with the pod address guard's sets empty, (a)
 * no table, (a') a one-rule table of ours. Configurations are interleaved in every round (in enum
 * order, then reversed, ...) after a warm-up round; the report gives medians of rounds.
 *
 * <p>The pod address guard is on as on a real node: node-1's Node object has the pods' range in
 * spec.podCIDRs, so the agent's snapshot carries it (pod_cidrs) and its table's guard4 set holds it
 * and known4 the three pods; the tables of (d) and (b') get the same guard sets, so (c) and (d)
 * still run behind identical tables (checked after the warm-up round), and (b) measures the guard's
 * cost for known, unselected pods. A configuration that should queue nothing and queued something
 * (the guard holding a pod it should know) stops the run.
 *
 * <p>{@code --queues Q} runs the agent with {@code --queues Q}, the C consumer with Q queues (one
 * thread each) and the C run's table over the same range; bin/bench-connrate runs Q = 1 and Q = the
 * CPU count.
 *
 * <p>{@code --agent-arg ARG} (repeatable) passes one more argument to the agent, e.g.
 * {@code --verdict-upload-rate=0} to see what the verdict upload costs.
 *
 * <p>Usage (root, normally through bin/bench-connrate): ConnRateBench NFQ_ACCEPT_BINARY [--rounds N] [--seq N] [--par-each N] [--queues Q] [--agent-arg ARG]...
 */
public final class ConnRateBench {
    private static final String PREFIX = "kvbench-";
    private static final int QUEUE = 100; // the agent's default --nfqueue-id
    private static final int PARALLEL = 4;
    private static final int PARALLEL8 = 8;
    private static final int WARMUP = 100;

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println(
                    "usage: ConnRateBench NFQ_ACCEPT_BINARY [--rounds N] [--seq N] [--par-each N] [--queues Q]");
            System.exit(2);
        }
        Path nfqAccept = Path.of(args[0]);
        int rounds = 9;
        int seq = 1000;
        int parEach = 500;
        int queues = 1;
        boolean verdictCache = false;
        List<String> agentArgs = new ArrayList<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--seq" -> seq = Integer.parseInt(args[i + 1]);
                case "--par-each" -> parEach = Integer.parseInt(args[i + 1]);
                case "--queues" -> queues = Integer.parseInt(args[i + 1]);
                case "--verdict-cache" -> {
                    if (!args[i + 1].equals("on") && !args[i + 1].equals("off")) {
                        throw new IllegalArgumentException("--verdict-cache on|off, not " + args[i + 1]);
                    }
                    verdictCache = args[i + 1].equals("on");
                }
                case "--agent-arg" -> agentArgs.add(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        new ConnRateBench(nfqAccept, rounds, seq, parEach, queues, verdictCache, agentArgs).run();
        System.exit(0);
    }

    private final Path nfqAccept;
    private final int rounds;
    private final int seq;
    private final int parEach;
    private final int queues;
    /**
     * Whether the agent runs its verdict cache: (c) connects to one server port over and over, so
     * with it (c) measures repeated connections accepted in the kernel; without it (the default)
     * every connection of (c) is judged, comparable with (d). The C run's table gets the same
     * cache rules (its consumer tags nothing, so nothing is cached there).
     */
    private final boolean verdictCache;
    /** More arguments of the agent (--agent-arg). */
    private final List<String> agentArgs;

    private final Progress progress = new Progress(new PrintWriter(System.err, true));

    private ConnRateBench(
            Path nfqAccept,
            int rounds,
            int seq,
            int parEach,
            int queues,
            boolean verdictCache,
            List<String> agentArgs) {
        this.queues = queues;
        this.agentArgs = List.copyOf(agentArgs);
        this.verdictCache = verdictCache;
        this.nfqAccept = nfqAccept;
        this.rounds = rounds;
        this.seq = seq;
        this.parEach = parEach;
    }

    private String[] agentArguments() {
        List<String> all = new ArrayList<>(
                List.of("--queues", String.valueOf(queues), verdictCache ? "--verdict-cache" : "--no-verdict-cache"));
        all.addAll(agentArgs);
        return all.toArray(String[]::new);
    }

    private void run() throws Exception {
        Path work = Files.createTempDirectory(PREFIX);
        Path manifests = work.resolve("manifests");
        Manifests.writePods(manifests);
        Manifests.writePolicy(manifests, false);
        SandboxOptions options = new SandboxOptions(
                        manifests,
                        1,
                        List.of(new ServePort(80, Protocol.TCP)),
                        "10.244.0.0/16",
                        Duration.ofSeconds(2),
                        PREFIX)
                .withAgentArgs("node-1", agentArguments());
        List<ManagedProcess> started = new ArrayList<>();
        Thread killStarted = new Thread(
                () -> {
                    started.forEach(ManagedProcess::close);
                    BenchFiles.deleteTree(work);
                },
                "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(killStarted);
        try (Sandbox sandbox = Sandbox.start(options, progress);
                Testbed plain = Testbed.create(
                        PREFIX, List.of("node-1"), sandbox.testbed().layout().pods())) {
            progress.step("starting echo servers and the minimal C NFQUEUE consumer");
            Bed agentBed = new Bed(sandbox.testbed());
            Bed plainBed = new Bed(plain);
            String plainNode = plain.layout().nodeNamespace("node-1");
            ManagedProcess c = ManagedProcess.start(
                    "nfq_accept",
                    plainNode,
                    List.of(nfqAccept.toString(), String.valueOf(QUEUE), String.valueOf(queues)),
                    work.resolve("nfq_accept.log"));
            started.add(c);
            awaitBound(c);
            // the agent's guard: the node's pod range, every endpoint of the node known (the node's
            // own addresses lie outside the range, so none of them is in known4)
            PodAddresses.Guard guard = new PodAddresses.Guard(
                    Set.of(Manifests.POD_RANGE),
                    Set.of(),
                    plain.layout().pods().stream()
                            .map(p -> p.primaryIp().getHostAddress())
                            .collect(Collectors.toSet()),
                    Set.of());
            PodAddresses pair = PodAddresses.of(List.of(
                            agentBed.client.primaryIp().getHostAddress(),
                            agentBed.server.primaryIp().getHostAddress()))
                    .withGuard(guard);
            PodAddresses unguarded = PodAddresses.of(
                    List.of(Bed.pod(plain, Manifests.OTHER).primaryIp().getHostAddress()));
            PodAddresses other = unguarded.withGuard(guard);
            NftManager table = plain.callIn(
                    plainNode,
                    () -> NftManager.create(
                            new Nftables(),
                            "kube_verdict",
                            QUEUE,
                            queues,
                            false,
                            null,
                            null,
                            io.kubeverdict.agent.nft.CutAction.DROP,
                            verdictCache
                                    ? io.kubeverdict.agent.run.AgentConfig.DEFAULT_VERDICT_CACHE
                                    : io.kubeverdict.agent.nft.CacheSettings.OFF));
            Nftables ctTable = plain.callIn(plainNode, Nftables::new);
            // the agent's second table, for domain-name rules: its chains see every packet even
            // with no pod watched, so the plain bed has it too
            DnsTable dns = new DnsTable(
                    ctTable, "kube_verdict" + "_dns", AgentConfig.Dns.defaultQueueId(QUEUE, queues), table);
            progress.done();

            List<Map<Config, Measurement>> results = new ArrayList<>();
            boolean policySelects = false;
            // round 0 warms up the JITs of this JVM and of the agent and is not reported
            for (int r = 0; r <= rounds; r++) {
                List<Config> order = new ArrayList<>(List.of(Config.values()));
                if (r % 2 == 1) {
                    java.util.Collections.reverse(order); // a b c d, d c b a: one policy switch per round
                }
                Map<Config, Measurement> round = new EnumMap<>(Config.class);
                for (Config config : order) {
                    progress.step((r == 0 ? "warm-up" : "round " + r + "/" + rounds) + ": " + config.label);
                    Bed bed;
                    conntrackOnly(plain, plainNode, ctTable, config == Config.CONNTRACK);
                    switch (config) {
                        case BASELINE, CONNTRACK -> {
                            plain.callIn(plainNode, () -> {
                                dns.remove();
                                table.remove();
                                return null;
                            });
                            bed = plainBed;
                        }
                        case TABLE_UNGUARDED -> {
                            agentTables(plain, plainNode, table, dns, unguarded);
                            bed = plainBed;
                        }
                        case TABLE_UNSELECTED -> {
                            agentTables(plain, plainNode, table, dns, other);
                            bed = plainBed;
                        }
                        case C_NFQUEUE -> {
                            agentTables(plain, plainNode, table, dns, pair);
                            bed = plainBed;
                        }
                        default -> {
                            boolean want = config == Config.SELECTED;
                            if (want != policySelects) {
                                double passes = rejudgePasses(sandbox);
                                Manifests.writePolicy(manifests, want);
                                if (!sandbox.reload()) {
                                    throw new IllegalStateException("the sandbox refused the policy change");
                                }
                                policySelects = want;
                                agentBed.awaitSelected(want);
                                awaitRejudged(sandbox, passes);
                            }
                            bed = agentBed;
                        }
                    }
                    long consumer = switch (config) {
                        case UNSELECTED, SELECTED -> sandbox.agent("node-1").pid();
                        case C_NFQUEUE -> c.pid();
                        default -> 0;
                    };
                    Measurement m = bed.measure(consumer, sandbox.controlPlane().pid());
                    if (!config.queues() && m.queuedPerConnection() > 0) {
                        throw new IllegalStateException(config.label + " queued " + m.queuedPerConnection()
                                + " packets per connection; it should queue none (is the guard holding known pods?)");
                    }
                    round.put(config, m);
                    if (!c.alive()) {
                        throw new IllegalStateException("nfq_accept exited:\n" + c.tail(20));
                    }
                    progress.done();
                }
                if (r > 0) {
                    results.add(round);
                } else {
                    checkSameRuleset(agentBed, plainBed); // agent in state (c), plain bed in state (d)
                }
            }
            plain.callIn(plainNode, () -> {
                dns.remove();
                table.remove();
                return null;
            });
            System.out.println();
            System.out.printf(
                    "verdict cache: %s; queues: %d (agent --queues, C consumer threads, table range); seq: %d connections one after the other; "
                            + "par%d: %d threads x %d; par%d: %d threads x %d; TCP connect + 1-byte echo + close; load average at end: %s%n",
                    verdictCache ? "on ((c) repeats one key: accepted in the kernel after its first)" : "off",
                    queues,
                    seq,
                    PARALLEL,
                    PARALLEL,
                    parEach,
                    PARALLEL8,
                    PARALLEL8,
                    par8Each(),
                    Files.readString(Path.of("/proc/loadavg")).strip());
            if (!agentArgs.isEmpty()) {
                System.out.println("agent arguments added: " + String.join(" ", agentArgs));
            }
            System.out.print(Report.render(results, PARALLEL, PARALLEL8));
        } finally {
            started.forEach(ManagedProcess::close);
            try {
                Runtime.getRuntime().removeShutdownHook(killStarted);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            BenchFiles.deleteTree(work);
        }
    }

    /** par8 opens as many connections in all as par4. */
    private int par8Each() {
        return Math.max(1, parEach * PARALLEL / PARALLEL8);
    }

    private static final String CT_TABLE = "kvbench_conntrack";

    /** Adds or deletes the one-rule table that only makes conntrack track the node's packets. */
    private static void conntrackOnly(Testbed plain, String node, Nftables nft, boolean on) throws Exception {
        plain.callIn(
                node,
                () -> nft.run("add table inet " + CT_TABLE + "\ndelete table inet " + CT_TABLE + "\n"
                        + (on
                                ? "table inet " + CT_TABLE
                                        + " { chain forward {\n type filter hook forward priority filter; policy accept;\n"
                                        + "ct state invalid counter\n }\n}\n"
                                : "")));
    }

    /** The agent's tables as the agent has them with no pod watched for DNS (so no DNS table), the policy table with these addresses. */
    private static void agentTables(Testbed plain, String node, NftManager table, DnsTable dns, PodAddresses addresses)
            throws Exception {
        plain.callIn(node, () -> {
            dns.remove();
            table.start(addresses);
            dns.program(PodAddresses.EMPTY);
            return null;
        });
    }

    /** (c) and (d) must differ only in who answers the queue: same tables, same rules, same set elements. */
    private void checkSameRuleset(Bed agentBed, Bed plainBed) throws Exception {
        String agent = withoutCacheState(agentBed.ruleset());
        String plain = withoutCacheState(plainBed.ruleset());
        if (!agent.equals(plain)) {
            throw new IllegalStateException("the agent's table and the table of the C run differ:\n--- agent ---\n"
                    + agent + "\n--- C run ---\n" + plain);
        }
        progress.note("(c) and (d) use identical nftables tables:\n" + agent.strip());
    }

    /** The table without what the verdict cache holds (keys, the current tag, counter values), which only the agent fills. */
    private static String withoutCacheState(String ruleset) {
        return ruleset.lines()
                .filter(l -> !l.contains(" expires ") && !(l.contains("elements = {") && l.contains("0x0000")))
                .map(l -> l.replaceAll("packets \\d+ bytes \\d+", "packets - bytes -"))
                .reduce("", (a, b) -> a + b + "\n");
    }

    private static double rejudgePasses(Sandbox sandbox) throws Exception {
        double v = MetricsText.sum(sandbox.agentMetrics("node-1"), "kubeverdict_conntrack_rejudge_seconds_count");
        return Double.isNaN(v) ? 0 : v;
    }

    /**
     * Waits until the agent has judged the pods' existing connections again after the policy
     * switch (a pass over the conntrack table, which holds the earlier phases' tens of thousands of
     * TIME_WAIT entries): measured alongside, that pass's CPU would count against (b) and (c).
     */
    private void awaitRejudged(Sandbox sandbox, double passesBefore) throws Exception {
        long start = System.nanoTime();
        while (true) {
            String metrics = sandbox.agentMetrics("node-1");
            double passes = MetricsText.sum(metrics, "kubeverdict_conntrack_rejudge_seconds_count");
            double pending = MetricsText.sum(metrics, "kubeverdict_conntrack_endpoints_pending");
            if (passes > passesBefore && pending == 0) {
                return;
            }
            if (System.nanoTime() - start > Duration.ofSeconds(30).toNanos()) {
                progress.note("the agent's pass over existing connections did not end within 30 s (passes " + passes
                        + ", pending " + pending + "); measuring anyway");
                return;
            }
            Thread.sleep(20);
        }
    }

    private static void awaitBound(ManagedProcess p) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!Files.exists(p.log()) || !Files.readString(p.log()).contains("bound")) {
            if (!p.alive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("nfq_accept did not bind its queue:\n" + p.tail(20));
            }
            Thread.sleep(20);
        }
    }

    /** One testbed's client and server pods, the echo server and the queue counter of its node. */
    private final class Bed {
        final Testbed testbed;
        final PodSpec client;
        final PodSpec server;
        final String node;
        final ConnectionLoad load;

        Bed(Testbed testbed) throws Exception {
            this.testbed = testbed;
            this.client = pod(testbed, Manifests.CLIENT);
            this.server = pod(testbed, Manifests.SERVER);
            this.node = testbed.layout().nodeNamespace(client.node());
            String clientNs = testbed.layout().podNamespace(client.name());
            // many short connections from one address: wide port range, reuse TIME_WAIT ports
            testbed.exec(
                    clientNs,
                    "sysctl",
                    "-q",
                    "-w",
                    "net.ipv4.ip_local_port_range=10000 65000",
                    "net.ipv4.tcp_tw_reuse=1");
            EchoServer echo = new EchoServer(
                    testbed, testbed.layout().podNamespace(server.name()), server.primaryIp(), Manifests.ECHO_PORT);
            this.load =
                    new ConnectionLoad(clientNs, new InetSocketAddress(server.primaryIp(), Manifests.ECHO_PORT), echo);
        }

        /**
         * {@code consumerPid}: the process answering the queue (or idle beside it), whose CPU is read
         * by thread, 0 for none; {@code controlPlanePid}: the sandbox's control plane, read whole.
         */
        Measurement measure(long consumerPid, long controlPlanePid) throws Exception {
            load.run(1, WARMUP);
            long before = queued();
            Map<String, Long> cpuBefore = ProcessCpu.byThread(consumerPid);
            long controlPlaneBefore = ProcessCpu.total(controlPlanePid);
            Sample sequential = load.run(1, seq);
            Sample parallel = load.run(PARALLEL, parEach);
            Sample parallel8 = load.run(PARALLEL8, par8Each());
            Map<String, Long> cpu = ProcessCpu.since(cpuBefore, ProcessCpu.byThread(consumerPid));
            long controlPlane = ProcessCpu.total(controlPlanePid) - controlPlaneBefore;
            long queued = queued() - before;
            int connections = seq + PARALLEL * parEach + PARALLEL8 * par8Each();
            return new Measurement(
                    sequential, parallel, parallel8, (double) queued / connections, cpu, controlPlane, connections);
        }

        /**
         * Waits until the node's set holds the client and server (or neither): the kernel state the
         * configuration means, whatever the control plane and agent reported. Notes any wait.
         */
        void awaitSelected(boolean selected) throws Exception {
            long start = System.nanoTime();
            String want = selected
                    ? "elements = { " + client.primaryIp().getHostAddress() + ", "
                            + server.primaryIp().getHostAddress() + " }"
                    : "";
            int checks = 0;
            while (true) {
                checks++;
                String set = testbed.exec(node, "nft", "list", "set", "inet", "kube_verdict", "pods4");
                boolean hasClient = set.contains(client.primaryIp().getHostAddress());
                if (selected ? set.contains(want) : !hasClient) {
                    break;
                }
                if (System.nanoTime() - start > Duration.ofSeconds(30).toNanos()) {
                    throw new IllegalStateException(
                            "the agent's set never became " + (selected ? want : "free of the pods") + ":\n" + set);
                }
                Thread.sleep(20);
            }
            if (checks > 1) {
                progress.note("the agent's set reached the new state " + (System.nanoTime() - start) / 1_000_000
                        + " ms after the sandbox reported it applied");
            }
        }

        /** nft's listing of the agent's tables on this bed's node (libxtables' stderr noise dropped; no DNS table while nothing is watched). */
        String ruleset() throws java.io.IOException {
            List<String> present =
                    testbed.exec(node, "nft", "list", "tables").lines().toList();
            StringBuilder tables = new StringBuilder();
            for (String table : List.of("kube_verdict", "kube_verdict_dns")) {
                if (present.contains("table inet " + table)) {
                    tables.append(testbed.exec(node, "nft", "list", "table", "inet", table));
                }
            }
            return tables.toString().lines().filter(l -> !l.contains("NFPROTO")).reduce("", (a, b) -> a + b + "\n");
        }

        /** Packet ids the node's queues handed out so far (0 for those nobody is bound to). */
        private long queued() throws Exception {
            int[] ids = new int[queues];
            for (int i = 0; i < queues; i++) {
                ids[i] = QUEUE + i;
            }
            return testbed.callIn(
                    node,
                    () -> QueueCounters.read(QueueCounters.PROC_FILE, ids).stream()
                            .mapToLong(QueueCounters::idSequence)
                            .sum());
        }

        private static PodSpec pod(Testbed bed, String name) {
            return bed.layout().pods().stream()
                    .filter(p -> p.name().equals(name))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no pod " + name));
        }
    }
}
