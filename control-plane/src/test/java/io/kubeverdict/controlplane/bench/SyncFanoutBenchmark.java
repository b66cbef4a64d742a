package io.kubeverdict.controlplane.bench;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.kubeverdict.controlplane.calc.IncrementalPolicyCalculator;
import io.kubeverdict.controlplane.metrics.ControlPlaneMetrics;
import io.kubeverdict.controlplane.service.CalculationLoop;
import io.kubeverdict.controlplane.service.GrpcEndpoint;
import io.kubeverdict.controlplane.sync.PolicySyncService;
import io.kubeverdict.controlplane.sync.SnapshotHub;
import io.kubeverdict.controlplane.tls.NodeAuthorizer;
import io.kubeverdict.proto.v1.NodeSnapshot;
import io.kubeverdict.proto.v1.PolicySyncGrpc;
import io.kubeverdict.proto.v1.SyncRequest;
import io.kubeverdict.proto.v1.ToAgent;
import io.kubeverdict.runtime.grpc.GrpcServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fan-out benchmark (not a test; run with the `benchmarks` profile, see control-plane/pom.xml):
 * a cluster of P pods (110 per node, 100 per namespace, 5% labelled role=client) where every
 * namespace admits role=client pods from the whole cluster, so every node refers to one
 * cluster-wide IP set; A simulated agents hold Sync streams over real loopback sockets. Each
 * round relabels one pod (into or out of role=client): the change goes through the real event
 * thread and calculator, and the time until each agent has received its delta is measured.
 * System properties: bench.pods, bench.agents, bench.rounds.
 */
public final class SyncFanoutBenchmark {
    static final int PODS_PER_NODE = 110;
    static final int PODS_PER_NAMESPACE = 100;

    public static void main(String[] args) throws Exception {
        int pods = Integer.getInteger("bench.pods", 150_000);
        int agents = Integer.getInteger("bench.agents", 1000);
        int rounds = Integer.getInteger("bench.rounds", 30);
        int nodes = (pods + PODS_PER_NODE - 1) / PODS_PER_NODE;
        if (agents > nodes) {
            throw new IllegalArgumentException("more agents than nodes: " + agents + " > " + nodes);
        }
        System.out.printf("cluster: %d pods, %d nodes, %d namespaces; %d agents%n", pods, nodes,
                (pods + PODS_PER_NAMESPACE - 1) / PODS_PER_NAMESPACE, agents);

        SnapshotHub hub = new SnapshotHub();
        ControlPlaneMetrics metrics = new ControlPlaneMetrics(new SimpleMeterRegistry());
        CalculationLoop loop = new CalculationLoop(new IncrementalPolicyCalculator(), hub, metrics, 1, p -> { });
        loop.start();
        long t0 = System.nanoTime();
        List<Pod> all = new ArrayList<>(pods);
        for (int ns = 0; ns * PODS_PER_NAMESPACE < pods; ns++) {
            Namespace n = namespace(ns);
            NetworkPolicy allowClients = allowClients(ns);
            NetworkPolicy sameTier = sameTier(ns);
            loop.change("namespace/upsert", c -> c.upsertNamespace(n));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(allowClients));
            loop.change("networkpolicy/upsert", c -> c.upsertPolicy(sameTier));
        }
        for (int i = 0; i < pods; i++) {
            Pod p = pod(i, i % 20 == 0);
            all.add(p);
            loop.change("pod/upsert", c -> c.upsertPod(p));
        }
        loop.sourceSynced("bench");
        loop.firstCalculation().get(30, TimeUnit.MINUTES);
        System.out.printf("initial calculation: %.1f s%n", (System.nanoTime() - t0) / 1e9);

        NodeSnapshot node0 = hub.current("node-0").snapshot();
        long members = node0.getIpSetsList().stream().mapToLong(s -> s.getMembersCount()).sum();
        System.out.printf("snapshot of node-0: %d endpoints, %d policies, %d IP sets (%d members), %d bytes serialized%n",
                node0.getEndpointsCount(), node0.getPoliciesCount(), node0.getIpSetsCount(), members,
                node0.getSerializedSize());

        ExecutorService senders = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
        PolicySyncService sync = new PolicySyncService(hub, metrics, NodeAuthorizer.allowAll(), senders,
                PolicySyncService.Options.defaults());
        GrpcServer endpoint = GrpcEndpoint.create(new InetSocketAddress("127.0.0.1", 0), null,
                List.<BindableService>of(sync)).start();

        // When the event thread has published the last agent's node (calculation + publication done).
        java.util.concurrent.atomic.AtomicLong lastPublish = new java.util.concurrent.atomic.AtomicLong();
        for (int i = 0; i < agents; i++) {
            hub.subscribe("node-" + i, () -> lastPublish.set(System.nanoTime()));
        }
        io.micrometer.core.instrument.Timer build = metrics.registry().get("kubeverdict_snapshot_build").timer();
        io.micrometer.core.instrument.Timer calc = metrics.registry().get("kubeverdict_calculation").timer();
        Random rnd = new Random(7);
        // bench.agentsIn: jvm (agents share the server's JVM), process (a separate JVM, see
        // SyncAgentsProcess), or both: blocks of bench.block rounds alternating between the two.
        String where = System.getProperty("bench.agentsIn", "jvm");
        List<String> modes = "both".equals(where) ? List.of("jvm", "process") : List.of(where);
        int block = "both".equals(where) ? Integer.getInteger("bench.block", 5) : rounds;
        Map<String, Phase> phases = new java.util.LinkedHashMap<>();
        modes.forEach(m -> phases.put(m, new Phase()));
        AgentSet agentSet = null;
        for (int done = 0, b = 0; done < rounds * modes.size(); b++) {
            String mode = modes.get(b % modes.size());
            Phase ph = phases.get(mode);
            if (agentSet != null) {
                agentSet.close();
            }
            long heapBefore = usedHeapAfterGc();
            long c0 = System.nanoTime();
            agentSet = "process".equals(mode) ? ProcessAgents.start(endpoint.port(), agents)
                    : InJvmAgents.start(endpoint.port(), agents);
            if (b < modes.size()) {
                System.out.printf("[%s] %d agents connected and in sync: %.1f s; server heap %s: +%.1f MiB%n", mode, agents,
                        (System.nanoTime() - c0) / 1e9, "process".equals(mode) ? "alone" : "and agents",
                        (usedHeapAfterGc() - heapBefore) / 1048576.0);
            }
            Thread.sleep(500);
            for (int r = 0; r < block && ph.last.size() < rounds; r++, done++) {
                int victim = rnd.nextInt(pods);
                Pod before = all.get(victim);
                boolean client = !"client".equals(before.getMetadata().getLabels().get("role"));
                Pod after = pod(victim, client);
                all.set(victim, after);
                int[] counts = new int[agents];
                for (int i = 0; i < agents; i++) {
                    counts[i] = agentSet.deltas(i);
                }
                double buildBefore = build.totalTime(TimeUnit.MILLISECONDS);
                long buildCountBefore = build.count();
                double calcBefore = calc.totalTime(TimeUnit.MILLISECONDS);
                long calcCountBefore = calc.count();
                long start = System.nanoTime();
                loop.change("pod/upsert", c -> c.upsertPod(after));
                long deadline = start + TimeUnit.SECONDS.toNanos(60);
                for (int i = 0; i < agents; i++) {
                    while (agentSet.deltas(i) == counts[i]) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("node-" + i + " got no delta");
                        }
                        Thread.sleep(0, 200_000);
                    }
                }
                long max = 0;
                for (int i = 0; i < agents; i++) {
                    long d = agentSet.firstDeltaAfter(i, start) - start;
                    ph.perAgent.add(d);
                    max = Math.max(max, d);
                }
                ph.last.add(max);
                ph.published.add(lastPublish.get() - start);
                ph.calcMs += calc.totalTime(TimeUnit.MILLISECONDS) - calcBefore;
                ph.buildMs += build.totalTime(TimeUnit.MILLISECONDS) - buildBefore;
                ph.bursts += calc.count() - calcCountBefore;
                ph.builds += build.count() - buildCountBefore;
                Thread.sleep(200); // let the stream quiesce between rounds
            }
        }
        phases.forEach((mode, ph) -> ph.print(mode));
        System.out.printf("load average at the end: %.2f%n", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());

        // Local changes: flip one pod's tier label (web <-> db). Only the nodes whose snapshots use
        // that namespace's same-tier set (or hold the pod) are affected: a handful, not all.
        long[] localLast = new long[rounds];
        int[] localAffected = new int[rounds];
        for (int r = 0; r < rounds; r++) {
            int victim = rnd.nextInt(pods);
            Pod before = all.get(victim);
            Map<String, String> labels = new java.util.HashMap<>(before.getMetadata().getLabels());
            labels.put("tier", "web".equals(labels.get("tier")) ? "db" : "web");
            Pod after = new PodBuilder(before).editMetadata().withLabels(labels).endMetadata().build();
            all.set(victim, after);
            int[] counts = new int[agents];
            for (int i = 0; i < agents; i++) {
                counts[i] = agentSet.deltas(i);
            }
            long start = System.nanoTime();
            loop.change("pod/upsert", c -> c.upsertPod(after));
            Thread.sleep(3000); // generous: every affected agent has its delta by then
            long max = 0;
            int affected = 0;
            for (int i = 0; i < agents; i++) {
                if (agentSet.deltas(i) != counts[i]) {
                    affected++;
                    max = Math.max(max, agentSet.firstDeltaAfter(i, start) - start);
                }
            }
            localLast[r] = max;
            localAffected[r] = affected;
        }
        long[] hit = java.util.stream.IntStream.range(0, rounds).filter(r -> localAffected[r] > 0)
                .mapToLong(r -> localLast[r]).sorted().toArray();
        if (hit.length > 0) {
            System.out.printf("[agents: %s] one pod tier-label change (%d of %d rounds reached an agent, %d-%d agents) -> last affected agent: p50 %.1f ms, p99 %.1f ms%n",
                    modes.get(modes.size() - 1), hit.length, rounds, Arrays.stream(localAffected).filter(a -> a > 0).min().orElse(0),
                    Arrays.stream(localAffected).max().orElse(0), pct(hit, 50) / 1e6, pct(hit, 99) / 1e6);
        }

        agentSet.close();
        endpoint.close();
        sync.close();
        senders.shutdownNow();
        loop.close();
        System.exit(0);
    }

    static long pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static Namespace namespace(int ns) {
        return new NamespaceBuilder().withNewMetadata().withName("ns-" + ns)
                .withLabels(Map.of("kubernetes.io/metadata.name", "ns-" + ns)).endMetadata().build();
    }

    static NetworkPolicy allowClients(int ns) {
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace("ns-" + ns).withName("allow-clients").endMetadata()
                .withNewSpec().withNewPodSelector().endPodSelector()
                .addNewIngress().addNewFrom().withNewNamespaceSelector().endNamespaceSelector()
                .withNewPodSelector().addToMatchLabels("role", "client").endPodSelector().endFrom()
                .addNewPort().withProtocol("TCP").withPort(new IntOrString(80)).endPort().endIngress()
                .endSpec().build();
    }

    static NetworkPolicy sameTier(int ns) {
        return new NetworkPolicyBuilder().withNewMetadata().withNamespace("ns-" + ns).withName("same-tier").endMetadata()
                .withNewSpec().withNewPodSelector().addToMatchLabels("tier", "web").endPodSelector()
                .addNewIngress().addNewFrom().withNewPodSelector().addToMatchLabels("tier", "web").endPodSelector()
                .endFrom().endIngress().endSpec().build();
    }

    static Pod pod(int i, boolean client) {
        Map<String, String> labels = new java.util.HashMap<>();
        labels.put("app", "app-" + (i % 20));
        labels.put("tier", i % 3 == 0 ? "web" : "db");
        if (client) {
            labels.put("role", "client");
        }
        String ip = "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255);
        return new PodBuilder().withNewMetadata().withNamespace("ns-" + (i / PODS_PER_NAMESPACE)).withName("pod-" + i)
                .withLabels(labels).endMetadata()
                .withNewSpec().withNodeName("node-" + (i / PODS_PER_NODE)).addNewContainer().withName("c")
                .withImage("i").endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip).endStatus().build();
    }

    /** Measurements of one agent placement (in the server's JVM or in a separate process). */
    static final class Phase {
        final List<Long> last = new ArrayList<>();
        final List<Long> published = new ArrayList<>();
        final List<Long> perAgent = new ArrayList<>();
        double calcMs;
        double buildMs;
        long bursts;
        long builds;

        void print(String mode) {
            long[] l = last.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] p = published.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] each = perAgent.stream().mapToLong(Long::longValue).sorted().toArray();
            System.out.printf("[agents: %s] of which calculation until the last node's snapshot is published: p50 %.1f ms, p99 %.1f ms%n",
                    mode, pct(p, 50) / 1e6, pct(p, 99) / 1e6);
            System.out.printf("[agents: %s] one pod label change -> LAST affected agent has its delta (over %d rounds): p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                    mode, l.length, pct(l, 50) / 1e6, pct(l, 99) / 1e6, l[l.length - 1] / 1e6);
            System.out.printf("[agents: %s] per agent (%d deliveries): p50 %.1f ms, p99 %.1f ms%n", mode, each.length,
                    pct(each, 50) / 1e6, pct(each, 99) / 1e6);
            System.out.printf("[agents: %s] per round: event thread busy %.1f ms (calculator producing snapshots: %.1f ms), mean over %d bursts%n",
                    mode, calcMs / Math.max(1, bursts), buildMs / Math.max(1, builds), bursts);
        }
    }

    /** The A simulated agents, wherever they run: delta counts and arrival times per agent. */
    interface AgentSet {
        int deltas(int agent);

        /** System.nanoTime of this JVM at the first delta arrival at or after start. */
        long firstDeltaAfter(int agent, long start);

        void close() throws Exception;
    }

    /** Arrival rings per agent, shared by both placements. */
    static class Arrivals {
        final AtomicInteger[] deltas;
        final long[][] arrivals;

        Arrivals(int agents) {
            deltas = new AtomicInteger[agents];
            arrivals = new long[agents][64];
            for (int i = 0; i < agents; i++) {
                deltas[i] = new AtomicInteger();
            }
        }

        void arrived(int agent, long nanos) {
            synchronized (arrivals[agent]) {
                arrivals[agent][deltas[agent].get() % 64] = nanos;
            }
            deltas[agent].incrementAndGet();
        }

        public int deltas(int agent) {
            return deltas[agent].get();
        }

        public long firstDeltaAfter(int agent, long start) {
            synchronized (arrivals[agent]) {
                long best = Long.MAX_VALUE;
                for (long t : arrivals[agent]) {
                    if (t >= start && t < best) {
                        best = t;
                    }
                }
                return best;
            }
        }
    }

    /** Agents in this JVM: arrival is timestamped in onNext. */
    static final class InJvmAgents extends Arrivals implements AgentSet {
        final List<Agent> list = new ArrayList<>();

        private InJvmAgents(int agents) {
            super(agents);
        }

        static InJvmAgents start(int port, int agents) throws InterruptedException {
            InJvmAgents set = new InJvmAgents(agents);
            CountDownLatch inSync = new CountDownLatch(agents);
            for (int i = 0; i < agents; i++) {
                int index = i;
                set.list.add(new Agent(port, "node-" + i, inSync, () -> set.arrived(index, System.nanoTime())));
            }
            if (!inSync.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("agents did not get in sync");
            }
            return set;
        }

        @Override
        public void close() {
            list.forEach(Agent::close);
        }
    }

    /**
     * Agents in a separate JVM (SyncAgentsProcess) on the same classpath: each delta is reported as
     * a line on the child's stdout and timestamped here when read, so the figures include one pipe
     * write, wake-up and read (tens of µs) per delta on top of the delivery itself.
     */
    static final class ProcessAgents extends Arrivals implements AgentSet {
        private final Process process;
        private final Thread reader;

        private ProcessAgents(int agents, Process process) {
            super(agents);
            this.process = process;
            this.reader = new Thread(this::read, "agents-process-reader");
        }

        static ProcessAgents start(int port, int agents) throws Exception {
            String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(javaBin, "-Xmx" + System.getProperty("bench.agentsHeap", "2g"),
                    "-Dlogback.configurationFile=" + System.getProperty("logback.configurationFile", ""),
                    "-cp", System.getProperty("java.class.path"), SyncAgentsProcess.class.getName(),
                    Integer.toString(port), Integer.toString(agents))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            ProcessAgents set = new ProcessAgents(agents, p);
            java.io.BufferedReader in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
            String first = in.readLine();
            if (!"ready".equals(first)) {
                p.destroyForcibly();
                throw new IllegalStateException("agents process: " + first);
            }
            set.in = in;
            set.reader.setDaemon(true);
            set.reader.start();
            return set;
        }

        private java.io.BufferedReader in;

        private void read() {
            try {
                for (String line; (line = in.readLine()) != null; ) {
                    long now = System.nanoTime();
                    if (line.startsWith("d ")) {
                        arrived(Integer.parseInt(line, 2, line.length(), 10), now);
                    }
                }
            } catch (java.io.IOException e) {
                // process ended
            }
        }

        @Override
        public void close() throws Exception {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    /** A simulated agent: keeps no state, only notes when deltas arrive. */
    static final class Agent implements ClientResponseObserver<SyncRequest, ToAgent> {
        final String node;
        final ManagedChannel channel;
        private final CountDownLatch inSyncLatch;
        private final Runnable onDelta;
        private volatile boolean inSync;
        private ClientCallStreamObserver<SyncRequest> call;
        private volatile boolean closing;

        Agent(int port, String node, CountDownLatch inSyncLatch, Runnable onDelta) {
            this.node = node;
            this.inSyncLatch = inSyncLatch;
            this.onDelta = onDelta;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                    .maxInboundMessageSize(8 << 20).build();
            PolicySyncGrpc.newStub(channel).sync(SyncRequest.newBuilder().setNode(node).setAgentVersion("bench").build(), this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<SyncRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(ToAgent m) {
            if (m.hasInSync()) {
                if (!inSync) {
                    inSync = true;
                    inSyncLatch.countDown();
                }
            } else if (inSync) {
                onDelta.run();
            }
        }

        @Override
        public void onError(Throwable t) {
            if (!closing) {
                System.err.println(node + ": " + t);
            }
        }

        @Override
        public void onCompleted() {}

        void close() {
            closing = true;
            call.cancel("bench done", null);
            channel.shutdownNow();
        }
    }
}
