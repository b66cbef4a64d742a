// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.bench;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.kubeverdict.proto.v1.NodeSnapshot;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Fan-out benchmark (not a test; run with the `benchmarks` profile, see control-plane/pom.xml):
 * a cluster of P pods (110 per node, 100 per namespace, 5% labelled role=client) where every
 * namespace admits role=client pods from the whole cluster, so every node refers to one
 * cluster-wide IP set; A simulated agents hold Sync streams over real loopback sockets. Each
 * round relabels one pod (into or out of role=client): the change goes through the real event
 * thread and calculator, and the time until each agent has received its delta is measured, after
 * warm-up rounds. System properties: bench.pods, bench.agents, bench.rounds, bench.warmup (rounds
 * not counted after each connection of the agents), bench.localRounds, bench.agentsIn (jvm,
 * process, both), bench.block, and bench.replicas: 2 runs two replicas ({@link FanoutReplica}, each
 * with its own calculation of the cluster, as two replicas of the Deployment have) and alternates
 * blocks of rounds between one replica with bench.agents agents and both with bench.agents each
 * (agents in a separate process; a change goes to every replica, as each one's informers see it).
 */
public final class SyncFanoutBenchmark {
    static final int PODS_PER_NODE = 110;
    static final int PODS_PER_NAMESPACE = 100;

    /** Where one block of rounds puts its agents: in this JVM or another process, and on how many replicas. */
    record Mode(String name, boolean inProcess, int replicas) {}

    public static void main(String[] args) throws Exception {
        int pods = Integer.getInteger("bench.pods", 150_000);
        int agents = Integer.getInteger("bench.agents", 1000);
        int rounds = Integer.getInteger("bench.rounds", 30);
        // bench.replicas=2: two replicas, each with its own calculation; blocks of rounds alternate
        // between one replica with its agents and both with theirs (agents in another process).
        int replicas = Integer.getInteger("bench.replicas", 1);
        if (replicas != 1 && replicas != 2) {
            throw new IllegalArgumentException("bench.replicas is 1 or 2, got " + replicas);
        }
        int nodes = (pods + PODS_PER_NODE - 1) / PODS_PER_NODE;
        if (agents * replicas > nodes) {
            throw new IllegalArgumentException("more agents than nodes: " + agents * replicas + " > " + nodes);
        }
        System.out.printf(
                "cluster: %d pods, %d nodes, %d namespaces; %d agents per replica, %d replica(s)%n",
                pods, nodes, (pods + PODS_PER_NAMESPACE - 1) / PODS_PER_NAMESPACE, agents, replicas);

        List<Pod> all = new ArrayList<>(pods);
        for (int i = 0; i < pods; i++) {
            all.add(pod(i, i % 20 == 0));
        }
        List<FanoutReplica> servers = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            long t0 = System.nanoTime();
            FanoutReplica replica = FanoutReplica.start(all);
            replica.watch(r * agents, agents);
            servers.add(replica);
            System.out.printf("replica %d: initial calculation %.1f s%n", r + 1, (System.nanoTime() - t0) / 1e9);
        }

        NodeSnapshot node0 = servers.get(0).hub.current("node-0").snapshot();
        long members = node0.getIpSetsList().stream()
                .mapToLong(s -> s.getMembersCount())
                .sum();
        System.out.printf(
                "snapshot of node-0: %d endpoints, %d policies, %d IP sets (%d members), %d bytes serialized%n",
                node0.getEndpointsCount(),
                node0.getPoliciesCount(),
                node0.getIpSetsCount(),
                members,
                node0.getSerializedSize());

        Random rnd = new Random(7);
        // bench.agentsIn: jvm (agents share the server's JVM), process (a separate JVM, see
        // SyncAgentsProcess), or both: blocks of bench.block rounds alternating between the two.
        String where = System.getProperty("bench.agentsIn", "jvm");
        List<Mode> modes = replicas == 2
                ? List.of(
                        new Mode("1 replica, " + agents + " agents", true, 1),
                        new Mode("2 replicas, " + 2 * agents + " agents", true, 2))
                : ("both".equals(where) ? List.of("jvm", "process") : List.of(where))
                        .stream().map(m -> new Mode(m, "process".equals(m), 1)).toList();
        int block = modes.size() > 1 ? Integer.getInteger("bench.block", 5) : rounds;
        // Rounds run after each (re)connection and not counted: the JIT compiles the delta path
        // of both sides during the first rounds (a control plane runs for days, warm).
        int warmup = Integer.getInteger("bench.warmup", 60);
        Map<String, Phase> phases = new java.util.LinkedHashMap<>();
        modes.forEach(m -> phases.put(m.name(), new Phase()));
        AgentSet agentSet = null;
        List<FanoutReplica> active = servers.subList(0, 1);
        for (int done = 0, b = 0; done < rounds * modes.size(); b++) {
            Mode mode = modes.get(b % modes.size());
            Phase ph = phases.get(mode.name());
            if (agentSet != null) {
                agentSet.close();
            }
            active = servers.subList(0, mode.replicas());
            active.forEach(FanoutReplica::catchUp);
            int[] ports = active.stream().mapToInt(FanoutReplica::port).toArray();
            long heapBefore = usedHeapAfterGc();
            long c0 = System.nanoTime();
            agentSet = mode.inProcess() ? ProcessAgents.start(ports, agents) : InJvmAgents.start(ports, agents);
            if (b < modes.size()) {
                System.out.printf(
                        "[%s] %d agents connected and in sync: %.1f s; server heap %s: +%.1f MiB%n",
                        mode.name(),
                        agents * ports.length,
                        (System.nanoTime() - c0) / 1e9,
                        mode.inProcess() ? "alone" : "and agents",
                        (usedHeapAfterGc() - heapBefore) / 1048576.0);
            }
            Thread.sleep(500);
            for (int r = -warmup; r < block && ph.last.size() < rounds; r++) {
                int victim = rnd.nextInt(pods);
                Pod before = all.get(victim);
                boolean client =
                        !"client".equals(before.getMetadata().getLabels().get("role"));
                Pod after = pod(victim, client);
                all.set(victim, after);
                double buildBefore = sum(active, x -> x.snapshotBuild().totalTime(TimeUnit.MILLISECONDS));
                long buildCountBefore =
                        (long) sum(active, x -> x.snapshotBuild().count());
                double calcBefore = sum(active, x -> x.calculation().totalTime(TimeUnit.MILLISECONDS));
                long calcCountBefore = (long) sum(active, x -> x.calculation().count());
                long serverCpu0 = processCpuNanos();
                long gc0 = gcMillis();
                long agentsCpu0 = agentSet.cpuNanos();
                agentSet.arm();
                long start = System.nanoTime();
                change(servers, active, after); // the informers of every replica see the change
                if (!agentSet.awaitComplete(TimeUnit.SECONDS.toNanos(60))) {
                    long[] t = agentSet.arrivals();
                    int missing = (int) Arrays.stream(t).filter(x -> x == 0).count();
                    throw new IllegalStateException(missing + " agents got no delta within 60 s");
                }
                long[] arrivals = agentSet.arrivals();
                long serverCpu = processCpuNanos() - serverCpu0;
                long agentsCpu = agentsCpu0 < 0 ? -1 : agentSet.cpuNanos() - agentsCpu0;
                if (r < 0) {
                    Thread.sleep(200);
                    continue; // warm-up
                }
                done++;
                long max = 0;
                for (long arrival : arrivals) {
                    long d = arrival - start;
                    ph.perAgent.add(d);
                    max = Math.max(max, d);
                }
                long published = active.stream()
                                .mapToLong(x -> x.lastPublish.get())
                                .max()
                                .orElse(start)
                        - start;
                ph.last.add(max);
                ph.published.add(published);
                ph.calcMs += sum(active, x -> x.calculation().totalTime(TimeUnit.MILLISECONDS)) - calcBefore;
                ph.buildMs += sum(active, x -> x.snapshotBuild().totalTime(TimeUnit.MILLISECONDS)) - buildBefore;
                ph.bursts += (long) sum(active, x -> x.calculation().count()) - calcCountBefore;
                ph.builds += (long) sum(active, x -> x.snapshotBuild().count()) - buildCountBefore;
                ph.serverCpu.add(serverCpu);
                StringBuilder perReplica = new StringBuilder();
                for (int k = 0; active.size() > 1 && k < active.size(); k++) {
                    long replicaMax = 0;
                    for (int i = k * agents; i < (k + 1) * agents; i++) {
                        replicaMax = Math.max(replicaMax, arrivals[i] - start);
                    }
                    perReplica.append(String.format("replica %d's last %.1f ms, ", k + 1, replicaMax / 1e6));
                }
                ph.rounds.add(String.format(
                        "%.1f ms (%spublished at %.1f ms, server CPU %.0f ms, server GC %d ms, load %.1f)",
                        max / 1e6,
                        perReplica,
                        published / 1e6,
                        serverCpu / 1e6,
                        gcMillis() - gc0,
                        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
                ph.agentsCpu.add(agentsCpu);
                ph.load.add(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                Thread.sleep(200); // let the stream quiesce between rounds
            }
        }
        phases.forEach((mode, ph) -> ph.print(mode, warmup));
        System.out.printf(
                "load average at the end: %.2f%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());

        // Local changes: flip one pod's tier label (web <-> db). Only the nodes whose snapshots use
        // that namespace's same-tier set (or hold the pod) are affected: a handful, not all.
        int localRounds = Integer.getInteger("bench.localRounds", rounds);
        long[] localLast = new long[localRounds];
        int[] localAffected = new int[localRounds];
        for (int r = 0; r < localRounds; r++) {
            int victim = rnd.nextInt(pods);
            Pod before = all.get(victim);
            Map<String, String> labels =
                    new java.util.HashMap<>(before.getMetadata().getLabels());
            labels.put("tier", "web".equals(labels.get("tier")) ? "db" : "web");
            Pod after = new PodBuilder(before)
                    .editMetadata()
                    .withLabels(labels)
                    .endMetadata()
                    .build();
            all.set(victim, after);
            agentSet.arm();
            long start = System.nanoTime();
            change(servers, active, after);
            Thread.sleep(3000); // generous: every affected agent has its delta by then
            long max = 0;
            int affected = 0;
            for (long t : agentSet.arrivals()) {
                if (t != 0) {
                    affected++;
                    max = Math.max(max, t - start);
                }
            }
            localLast[r] = max;
            localAffected[r] = affected;
        }
        long[] hit = java.util.stream.IntStream.range(0, localRounds)
                .filter(r -> localAffected[r] > 0)
                .mapToLong(r -> localLast[r])
                .sorted()
                .toArray();
        if (hit.length > 0) {
            System.out.printf(
                    "[agents: %s] one pod tier-label change (%d of %d rounds reached an agent, %d-%d agents) -> last affected agent: p50 %.1f ms, p99 %.1f ms%n",
                    modes.get(modes.size() - 1).name(),
                    hit.length,
                    localRounds,
                    Arrays.stream(localAffected).filter(a -> a > 0).min().orElse(0),
                    Arrays.stream(localAffected).max().orElse(0),
                    pct(hit, 50) / 1e6,
                    pct(hit, 99) / 1e6);
        }

        agentSet.close();
        for (FanoutReplica replica : servers) {
            replica.close();
        }
        System.exit(0);
    }

    /** The change to the active replicas now; the others apply it when they are next active. */
    private static void change(List<FanoutReplica> servers, List<FanoutReplica> active, Pod after) {
        for (FanoutReplica replica : servers) {
            if (active.contains(replica)) {
                replica.change(after);
            } else {
                replica.missed(after);
            }
        }
    }

    private static double sum(List<FanoutReplica> replicas, java.util.function.ToDoubleFunction<FanoutReplica> f) {
        return replicas.stream().mapToDouble(f).sum();
    }

    static long pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    /** Time this JVM's collectors spent collecting so far. */
    static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(java.lang.management.GarbageCollectorMXBean::getCollectionTime)
                .sum();
    }

    /** CPU time of this whole process (all threads, GC and JIT included). */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static Namespace namespace(int ns) {
        return new NamespaceBuilder()
                .withNewMetadata()
                .withName("ns-" + ns)
                .withLabels(Map.of("kubernetes.io/metadata.name", "ns-" + ns))
                .endMetadata()
                .build();
    }

    static NetworkPolicy allowClients(int ns) {
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace("ns-" + ns)
                .withName("allow-clients")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .endPodSelector()
                .addNewIngress()
                .addNewFrom()
                .withNewNamespaceSelector()
                .endNamespaceSelector()
                .withNewPodSelector()
                .addToMatchLabels("role", "client")
                .endPodSelector()
                .endFrom()
                .addNewPort()
                .withProtocol("TCP")
                .withPort(new IntOrString(80))
                .endPort()
                .endIngress()
                .endSpec()
                .build();
    }

    static NetworkPolicy sameTier(int ns) {
        return new NetworkPolicyBuilder()
                .withNewMetadata()
                .withNamespace("ns-" + ns)
                .withName("same-tier")
                .endMetadata()
                .withNewSpec()
                .withNewPodSelector()
                .addToMatchLabels("tier", "web")
                .endPodSelector()
                .addNewIngress()
                .addNewFrom()
                .withNewPodSelector()
                .addToMatchLabels("tier", "web")
                .endPodSelector()
                .endFrom()
                .endIngress()
                .endSpec()
                .build();
    }

    static Pod pod(int i, boolean client) {
        Map<String, String> labels = new java.util.HashMap<>();
        labels.put("app", "app-" + (i % 20));
        labels.put("tier", i % 3 == 0 ? "web" : "db");
        if (client) {
            labels.put("role", "client");
        }
        String ip = "10." + ((i >> 16) & 255) + "." + ((i >> 8) & 255) + "." + (i & 255);
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("ns-" + (i / PODS_PER_NAMESPACE))
                .withName("pod-" + i)
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .withNodeName("node-" + (i / PODS_PER_NODE))
                .addNewContainer()
                .withName("c")
                .withImage("i")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    /** Measurements of one agent placement (in the server's JVM or in a separate process). */
    static final class Phase {
        final List<Long> last = new ArrayList<>();
        final List<Long> published = new ArrayList<>();
        final List<Long> perAgent = new ArrayList<>();
        final List<Long> serverCpu = new ArrayList<>();
        final List<Long> agentsCpu = new ArrayList<>();
        final List<Double> load = new ArrayList<>();
        final List<String> rounds = new ArrayList<>(); // per round, for the slowest
        double calcMs;
        double buildMs;
        long bursts;
        long builds;

        void print(String mode, int warmup) {
            long[] l = last.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] p = published.stream().mapToLong(Long::longValue).sorted().toArray();
            long[] each = perAgent.stream().mapToLong(Long::longValue).sorted().toArray();
            // Process CPU time ticks in jiffies (10 ms): the mean over the rounds resolves finer.
            double cpu = serverCpu.stream().mapToLong(Long::longValue).average().orElse(0);
            double acpu =
                    agentsCpu.stream().mapToLong(Long::longValue).average().orElse(-1);
            System.out.printf(
                    "[agents: %s] of which calculation until the last node's snapshot is published: p50 %.1f ms, p99 %.1f ms%n",
                    mode, pct(p, 50) / 1e6, pct(p, 99) / 1e6);
            System.out.printf(
                    "[agents: %s] one pod label change -> LAST affected agent has its delta (over %d rounds after %d warm-up rounds per connection): p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                    mode, l.length, warmup, pct(l, 50) / 1e6, pct(l, 99) / 1e6, l[l.length - 1] / 1e6);
            System.out.printf(
                    "[agents: %s] per agent (%d deliveries): p50 %.1f ms, p99 %.1f ms%n",
                    mode, each.length, pct(each, 50) / 1e6, pct(each, 99) / 1e6);
            System.out.printf(
                    "[agents: %s] per round: event thread busy %.1f ms (calculator producing snapshots: %.1f ms), mean over %d bursts%n",
                    mode, calcMs / Math.max(1, bursts), buildMs / Math.max(1, builds), bursts);
            List<Integer> bySlowest = new ArrayList<>();
            for (int i = 0; i < last.size(); i++) {
                bySlowest.add(i);
            }
            bySlowest.sort((x, y) -> Long.compare(last.get(y), last.get(x)));
            System.out.printf(
                    "[agents: %s] slowest rounds: %s%n",
                    mode,
                    String.join(
                            "; ",
                            bySlowest.subList(0, Math.min(3, bySlowest.size())).stream()
                                    .map(rounds::get)
                                    .toList()));
            System.out.printf(
                    "[agents: %s] CPU per round (change until the last agent has it), mean: server process %.1f ms%s; load average %.1f-%.1f%n",
                    mode,
                    cpu / 1e6,
                    acpu < 0 ? "" : String.format(", agents process %.1f ms", acpu / 1e6),
                    load.stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    load.stream().mapToDouble(Double::doubleValue).max().orElse(0));
        }
    }

    /** The A simulated agents, wherever they run. */
    interface AgentSet {
        /** Forgets earlier arrivals; a delta from now on counts. */
        void arm() throws Exception;

        /** Waits until every agent has had a delta since {@link #arm}; false on timeout. */
        boolean awaitComplete(long timeoutNanos) throws Exception;

        /** First delta arrival per agent since {@link #arm}, in this JVM's System.nanoTime; 0: none. */
        long[] arrivals() throws Exception;

        /** CPU time of the agents' process; -1 when they share this JVM. */
        long cpuNanos();

        void close() throws Exception;
    }

    /** Agents in this JVM (their gRPC work shares the server's CPUs, heap and GC). */
    static final class InJvmAgents implements AgentSet {
        private final java.util.concurrent.Semaphore complete = new java.util.concurrent.Semaphore(0);
        private SimulatedAgents agents;

        static InJvmAgents start(int[] ports, int perReplica) throws InterruptedException {
            InJvmAgents set = new InJvmAgents();
            set.agents = SimulatedAgents.connect(ports, perReplica, set.complete::release);
            return set;
        }

        @Override
        public void arm() {
            complete.drainPermits();
            agents.arm();
        }

        @Override
        public boolean awaitComplete(long timeoutNanos) throws InterruptedException {
            return complete.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public long[] arrivals() {
            return agents.arrivals();
        }

        @Override
        public long cpuNanos() {
            return -1;
        }

        @Override
        public void close() {
            agents.close();
        }
    }

    /**
     * Agents in a separate JVM ({@link SyncAgentsProcess}) on the same classpath. The child stamps
     * each first arrival with its own System.nanoTime and reports them after the round; they are
     * mapped onto this JVM's clock by an offset measured at start: of 200 "clock" requests, the
     * reply with the shortest round trip, assumed to have been read halfway (error at most half
     * that round trip, printed). Nothing crosses the pipe while deltas are in flight.
     */
    static final class ProcessAgents implements AgentSet {
        private final Process process;
        private final java.io.Writer commands;
        private final java.util.concurrent.BlockingQueue<String> lines =
                new java.util.concurrent.LinkedBlockingQueue<>();
        private final int agents;
        private long offset; // child nanoTime + offset = ours

        private ProcessAgents(Process process, int agents) {
            this.process = process;
            this.agents = agents;
            this.commands = new java.io.OutputStreamWriter(
                    process.getOutputStream(), java.nio.charset.StandardCharsets.US_ASCII);
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                    process.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
            Thread reader = new Thread(
                    () -> {
                        try {
                            for (String line; (line = in.readLine()) != null; ) {
                                lines.add(line);
                            }
                        } catch (java.io.IOException e) {
                            // the process ended
                        }
                        lines.add("eof");
                    },
                    "agents-process-reader");
            reader.setDaemon(true);
            reader.start();
        }

        static ProcessAgents start(int[] ports, int perReplica) throws Exception {
            int agents = ports.length * perReplica;
            String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString();
            Process p = new ProcessBuilder(
                            javaBin,
                            "-Xmx" + System.getProperty("bench.agentsHeap", "2g"),
                            "-Dlogback.configurationFile=" + System.getProperty("logback.configurationFile", ""),
                            "-cp",
                            System.getProperty("java.class.path"),
                            SyncAgentsProcess.class.getName(),
                            String.join(
                                    ",",
                                    Arrays.stream(ports)
                                            .mapToObj(Integer::toString)
                                            .toList()),
                            Integer.toString(perReplica))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            ProcessAgents set = new ProcessAgents(p, agents);
            set.await("ready", TimeUnit.MINUTES.toNanos(30));
            set.calibrate(200);
            return set;
        }

        private void calibrate(int probes) throws Exception {
            long bestRtt = Long.MAX_VALUE;
            for (int i = 0; i < probes; i++) {
                long t0 = System.nanoTime();
                send("clock");
                String reply = await("clock ", TimeUnit.SECONDS.toNanos(10));
                long t1 = System.nanoTime();
                if (t1 - t0 < bestRtt) {
                    bestRtt = t1 - t0;
                    offset = (t0 + t1) / 2 - Long.parseLong(reply.substring(6));
                }
            }
            System.out.printf(
                    "[process] clock offset of the agents' JVM: %.1f µs, within ±%.1f µs (shortest of %d round trips)%n",
                    offset / 1e3, bestRtt / 2e3, probes);
        }

        private void send(String command) throws java.io.IOException {
            commands.write(command);
            commands.write('\n');
            commands.flush();
        }

        /** The next line starting with {@code prefix}; "complete" lines of earlier rounds are skipped. */
        private String await(String prefix, long timeoutNanos) throws Exception {
            long deadline = System.nanoTime() + timeoutNanos;
            while (true) {
                String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    return null;
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
                if (line.equals("eof")) {
                    throw new IllegalStateException("the agents process ended");
                }
                if (!line.equals("complete")) {
                    System.err.println("agents process: " + line);
                }
            }
        }

        @Override
        public void arm() throws Exception {
            lines.clear();
            send("arm");
            if (await("armed", TimeUnit.SECONDS.toNanos(10)) == null) {
                throw new IllegalStateException("agents process did not arm");
            }
        }

        @Override
        public boolean awaitComplete(long timeoutNanos) throws Exception {
            return await("complete", timeoutNanos) != null;
        }

        @Override
        public long[] arrivals() throws Exception {
            send("report");
            String line = await("report ", TimeUnit.SECONDS.toNanos(10));
            String[] f = line.split(" ");
            long[] out = new long[agents];
            for (int k = 0, i = 2; k < Integer.parseInt(f[1]); k++, i += 2) {
                out[Integer.parseInt(f[i])] = Long.parseLong(f[i + 1]) + offset;
            }
            return out;
        }

        @Override
        public long cpuNanos() {
            return process.info()
                    .totalCpuDuration()
                    .map(java.time.Duration::toNanos)
                    .orElse(-1L);
        }

        @Override
        public void close() throws Exception {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
