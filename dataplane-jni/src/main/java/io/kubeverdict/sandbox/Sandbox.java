package io.kubeverdict.sandbox;

import io.kubeverdict.proto.v1.ListNodesResponse;
import io.kubeverdict.proto.v1.NodeStatus;
import io.kubeverdict.controlplane.source.ManifestRevision;
import io.kubeverdict.testbed.ObservedMatrix;
import io.kubeverdict.testbed.PodSpec;
import io.kubeverdict.testbed.Protocol;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.Testbed;
import io.kubeverdict.testbed.TestbedLayout;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The whole system on one machine: the manifests' pods as network namespaces on node namespaces
 * (a {@link Testbed}), the control plane as a process in the fabric namespace watching a copy of
 * the manifests in which every pod has its node and IPs, one agent process per node inside that
 * node's namespace, and probes of every pod pair compared with `matrix` on the same copy.
 *
 * <p>Processes reach each other over the fabric bridge: the control plane listens on the fabric's
 * address, each agent's inspection and metrics on its node's address. Nothing is added to the
 * root namespace; the sandbox reaches the inspection services from a thread inside the fabric.
 */
public final class Sandbox implements AutoCloseable {
    static final String WORK_DIR_PREFIX = "kube-verdict-sandbox-";
    static final int CONTROL_PLANE_PORT = 7443;
    static final int CONTROL_PLANE_METRICS_PORT = 9090;
    static final int AGENT_METRICS_PORT = 9101;
    static final int AGENT_INSPECT_PORT = 9102;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration CONVERGE_TIMEOUT = Duration.ofSeconds(60);

    private final SandboxOptions options;
    private final Progress progress;
    private final Launcher launcher;
    private final Thread shutdownHook;
    private Path workDir;
    private Path assignedDir;
    /** ManifestRevision of the copy last written: what the control plane must report before we go on. */
    private String revision;
    private List<SandboxPod> pods;
    private Placement placement;
    private Testbed testbed;
    private ManagedProcess controlPlane;
    private final Map<String, ManagedProcess> agents = new LinkedHashMap<>();
    private Inspection inspection;
    private final Map<ServePort, CompletableFuture<ExpectedMatrix>> expectedCache = new LinkedHashMap<>();
    /** `matrix` runs: a few JVMs at a time (the common pool has one thread on two cores). */
    private final java.util.concurrent.ExecutorService matrixRuns = java.util.concurrent.Executors.newFixedThreadPool(3, r -> {
        Thread t = new Thread(r, "sandbox-matrix");
        t.setDaemon(true);
        return t;
    });
    private final Set<Process> running = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private boolean closed;

    private Sandbox(SandboxOptions options, Progress progress, Launcher launcher) {
        this.options = options;
        this.progress = progress;
        this.launcher = launcher;
        this.shutdownHook = new Thread(this::closeQuietly, "sandbox-teardown");
    }

    /** Builds and starts everything, and returns once every agent enforces the manifests. */
    public static Sandbox start(SandboxOptions options, Progress progress) throws Exception {
        requireRoot();
        Sandbox sandbox = new Sandbox(options, progress, Launcher.detect());
        Runtime.getRuntime().addShutdownHook(sandbox.shutdownHook);
        try {
            sandbox.startAll();
            return sandbox;
        } catch (Exception | Error e) {
            sandbox.close();
            throw e;
        }
    }

    static void requireRoot() throws IOException {
        if (!effectiveUidIsRoot(Files.readAllLines(Path.of("/proc/self/status")))) {
            throw new SandboxException("the sandbox needs root: it creates network namespaces, veth links and "
                    + "nftables tables, and runs agents that bind NFQUEUE (run it with sudo)");
        }
    }

    /** From /proc/self/status: "Uid: real effective saved fs". */
    static boolean effectiveUidIsRoot(List<String> status) {
        for (String line : status) {
            if (line.startsWith("Uid:")) {
                return line.split("\\s+")[2].equals("0");
            }
        }
        return false;
    }

    private void startAll() throws Exception {
        progress.step("reading manifests from " + options.manifests());
        ManifestSet manifests = ManifestSet.load(options.manifests());
        pods = manifests.pods().stream().filter(SandboxPod::runnable).sorted(Comparator.comparing(SandboxPod::name)).toList();
        if (pods.isEmpty()) {
            throw new SandboxException("no runnable Pods in " + options.manifests());
        }
        placement = Placement.of(pods, options.nodes(), options.podCidr());
        removeStaleWorkDirs();
        workDir = Files.createTempDirectory(WORK_DIR_PREFIX + ProcessHandle.current().pid() + "-");
        assignedDir = workDir.resolve("manifests");
        manifests.writeAssigned(placement, assignedDir);
        revision = ManifestRevision.read(assignedDir);
        manifestsChanged();
        progress.note(pods.size() + " pods on " + placement.nodes().size() + " nodes " + placement.nodes()
                + "; manifests with nodes and IPs in " + assignedDir);

        progress.step("creating nodes and pods as network namespaces, servers on " + servedPorts(probes()));
        testbed = Testbed.create(options.prefix(), placement.nodes(), podSpecs());
        TestbedLayout layout = testbed.layout();

        progress.step("starting the control plane and " + placement.nodes().size() + " agents");
        String cpAddress = layout.fabricAddress() + ":" + CONTROL_PLANE_PORT;
        controlPlane = ManagedProcess.start("control-plane", layout.fabricNamespace(), launcher.controlPlane(List.of(
                "--manifests", assignedDir.toString(),
                "--listen", cpAddress,
                "--metrics-bind-address", layout.fabricAddress() + ":" + CONTROL_PLANE_METRICS_PORT)),
                workDir.resolve("logs/control-plane.log"));
        Map<String, String> agentInspect = new LinkedHashMap<>();
        for (String node : placement.nodes()) {
            String address = layout.nodeAddress(node);
            agents.put(node, startAgent(node));
            agentInspect.put(node, address + ":" + AGENT_INSPECT_PORT);
        }
        inspection = new Inspection(new Inspection.InNamespace() {
            @Override
            public <T> T call(java.util.concurrent.Callable<T> work) throws Exception {
                return testbed.callIn(layout.fabricNamespace(), work);
            }
        }, cpAddress, agentInspect);

        progress.step("waiting until every agent is in sync");
        awaitConverged(START_TIMEOUT);
        progress.done();
    }

    private ManagedProcess startAgent(String node) throws IOException {
        TestbedLayout layout = testbed.layout();
        String address = layout.nodeAddress(node);
        return ManagedProcess.start("agent " + node, layout.nodeNamespace(node), launcher.agent(List.of(
                "--node", node,
                "--control-plane", layout.fabricAddress() + ":" + CONTROL_PLANE_PORT,
                "--metrics-bind-address", address + ":" + AGENT_METRICS_PORT,
                "--inspect-listen", address + ":" + AGENT_INSPECT_PORT)),
                workDir.resolve("logs/agent-" + node + ".log"));
    }

    /** The agent process of node (its PID, log), e.g. for a test that stops it. */
    public ManagedProcess agent(String node) {
        return agents.get(node);
    }

    /**
     * Stops node's agent (by PID: SIGTERM, then SIGKILL) if it still runs, starts a new one with
     * the same arguments and waits until every agent is in sync again.
     */
    public void restartAgent(String node) throws Exception {
        ManagedProcess old = agents.get(node);
        if (old == null) {
            throw new IllegalArgumentException("no agent for node " + node);
        }
        old.close();
        agents.put(node, startAgent(node));
        awaitConverged(START_TIMEOUT);
    }

    /** Work directories (manifest copy, logs) of runs whose process is gone: a crash left them. */
    private static void removeStaleWorkDirs() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> entries = Files.list(tmp)) {
            for (Path dir : entries.filter(p -> p.getFileName().toString().startsWith(WORK_DIR_PREFIX)).toList()) {
                String rest = dir.getFileName().toString().substring(WORK_DIR_PREFIX.length());
                int dash = rest.indexOf('-');
                if (dash <= 0 || !rest.substring(0, dash).chars().allMatch(Character::isDigit)) {
                    continue;
                }
                if (!io.kubeverdict.testbed.Leftovers.processGone(Long.parseLong(rest.substring(0, dash)))) {
                    continue;
                }
                try (Stream<Path> walk = Files.walk(dir)) {
                    walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    /** The probes: those asked for, else every TCP/UDP/SCTP container port of the pods. */
    public List<ServePort> probes() {
        if (!options.probes().isEmpty()) {
            return options.probes();
        }
        Set<ServePort> all = new LinkedHashSet<>();
        pods.stream().flatMap(p -> p.ports().stream())
                .sorted(Comparator.comparing(ServePort::protocol).thenComparing(ServePort::port)).forEach(all::add);
        return new ArrayList<>(all);
    }

    private static String servedPorts(List<ServePort> ports) {
        return ports.stream().filter(p -> p.protocol() != Protocol.SCTP).map(ServePort::toString).toList().toString();
    }

    /** Every pod serves its container ports and every probed port, so an unserved port never hides a verdict. */
    private List<PodSpec> podSpecs() throws IOException {
        List<PodSpec> specs = new ArrayList<>();
        for (SandboxPod pod : pods) {
            Set<ServePort> ports = new LinkedHashSet<>(pod.ports());
            ports.addAll(probes());
            List<InetAddress> ips = new ArrayList<>();
            for (String ip : placement.ipsOf().get(pod.name())) {
                ips.add(InetAddress.getByName(ip));
            }
            specs.add(new PodSpec(pod.name(), placement.nodeOf().get(pod.name()), ips, new ArrayList<>(ports)));
        }
        return specs;
    }

    public Path assignedManifests() {
        return assignedDir;
    }

    public Testbed testbed() {
        return testbed;
    }

    public Placement placement() {
        return placement;
    }

    /** Probes every requested port, comparing with the engine; matrices are computed while probing. */
    public List<ProbeResult> probeAll() throws Exception {
        return probe(probes());
    }

    public List<ProbeResult> probe(List<ServePort> targets) throws Exception {
        List<CompletableFuture<ExpectedMatrix>> expected = new ArrayList<>();
        targets.forEach(t -> expected.add(expectedAsync(t)));
        List<ProbeResult> results = new ArrayList<>();
        for (int i = 0; i < targets.size(); i++) {
            ObservedMatrix observed = testbed.probe(targets.get(i), options.probeTimeout());
            ExpectedMatrix matrix;
            try {
                matrix = expected.get(i).join();
            } catch (java.util.concurrent.CompletionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
            ProbeResult result = ProbeResult.compare(matrix, observed);
            if (!result.agrees()) {
                // A verdict delayed past the timeout on a loaded machine looks like a drop: look
                // once more, with twice the patience, and report what that second look saw.
                progress.note(targets.get(i) + ": " + result.mismatches().size() + " pairs differ, probing again");
                result = ProbeResult.compare(matrix, testbed.probe(targets.get(i), options.probeTimeout().multipliedBy(2)));
            }
            results.add(result);
        }
        return results;
    }

    /**
     * The engine's matrix for target on the current copy, computed once per copy and started as
     * early as possible (while the processes start or a change is applied): each is a JVM run.
     */
    private synchronized CompletableFuture<ExpectedMatrix> expectedAsync(ServePort target) {
        return expectedCache.computeIfAbsent(target, t -> CompletableFuture.supplyAsync(() -> {
            try {
                return expected(t);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, matrixRuns));
    }

    private synchronized void manifestsChanged() {
        expectedCache.clear();
        probes().forEach(this::expectedAsync);
    }

    /** `matrix --output json` on the manifests the control plane watches. */
    public ExpectedMatrix expected(ServePort target) throws IOException, InterruptedException {
        List<String> cmd = launcher.controlPlaneTool("matrix", List.of("--manifests", assignedDir.toString(),
                "--port", String.valueOf(target.port()), "--protocol", target.protocol().name(), "--output", "json"));
        Path err = Files.createTempFile(workDir, "matrix", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            running.add(p);
            String out;
            try {
                p.getOutputStream().close();
                out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new SandboxException("matrix failed for " + target + ": " + Files.readString(err).strip());
                }
            } finally {
                running.remove(p);
            }
            // stdout carries one JSON object; skip anything a logger may have put before it.
            String json = out.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b)
                    .orElseThrow(() -> new SandboxException("matrix printed no JSON for " + target + ": " + out.strip()));
            return ExpectedMatrix.parse(json);
        } finally {
            Files.deleteIfExists(err);
        }
    }

    /**
     * Re-reads the manifest directory and hands the control plane the new copy, then waits until
     * every agent has applied it. Returns false, changing nothing, when the pods themselves changed
     * (added, removed, moved, new ports or IPs): that needs a new sandbox.
     */
    public boolean reload() throws Exception {
        ManifestSet manifests = ManifestSet.load(options.manifests());
        List<SandboxPod> now = manifests.pods().stream().filter(SandboxPod::runnable)
                .sorted(Comparator.comparing(SandboxPod::name)).toList();
        Placement next = Placement.of(now, options.nodes(), options.podCidr());
        if (!next.equals(placement) || !portsOf(now).equals(portsOf(pods))) {
            return false;
        }
        manifests.writeAssigned(placement, assignedDir);
        revision = ManifestRevision.read(assignedDir);
        manifestsChanged();
        awaitConverged(CONVERGE_TIMEOUT);
        return true;
    }

    private static Map<String, List<ServePort>> portsOf(List<SandboxPod> list) {
        Map<String, List<ServePort>> ports = new LinkedHashMap<>();
        list.forEach(p -> ports.put(p.name(), p.ports()));
        return ports;
    }

    /**
     * Polls the control plane's node list and each agent's status until the control plane reports
     * the revision of the copy we last wrote ({@link ManifestRevision}: it publishes a revision only
     * after the snapshots computed from that load), every node's stream has sent that revision in
     * full and the node applied all that was sent, and every agent is in sync. A positive signal:
     * a change that moves no node's sequence converges as soon as its revision is reported.
     */
    private void awaitConverged(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        String why = "no answer yet";
        while (true) {
            checkAlive();
            try {
                String notReady = notConverged();
                if (notReady == null) {
                    return;
                }
                why = notReady;
            } catch (io.grpc.StatusRuntimeException e) {
                why = e.getStatus().getCode() + " " + e.getStatus().getDescription();
            }
            if (System.nanoTime() >= deadline) {
                throw new SandboxException("agents did not converge within " + timeout.toSeconds() + "s: " + why
                        + "\n--- control plane log ---\n" + controlPlane.tail(20)
                        + agents.values().stream().map(a -> "\n--- " + a.name() + " log ---\n" + a.tail(20)).reduce("", String::concat));
            }
            Thread.sleep(100);
        }
    }

    /** Why the system has not converged on {@link #revision} yet; null when it has. */
    private String notConverged() {
        ListNodesResponse list = inspection.listNodes();
        if (!list.getSourceRevision().equals(revision)) {
            return "the control plane has not published revision " + revision + " of " + assignedDir
                    + " (it reports \"" + list.getSourceRevision() + "\"; a load it rejected stays unreported, see its log)";
        }
        Map<String, NodeStatus> byNode = new LinkedHashMap<>();
        list.getNodesList().forEach(n -> byNode.put(n.getNode(), n));
        for (String node : placement.nodes()) {
            NodeStatus n = byNode.get(node);
            if (n == null || !n.getConnected()) {
                return "control plane has no stream to " + node;
            }
            if (!n.getSourceRevision().equals(revision)) {
                return "the stream to " + node + " has not sent revision " + revision + " yet";
            }
            if (n.getAppliedSequence() < n.getSentSequence()) {
                return node + " applied " + n.getAppliedSequence() + " of " + n.getSentSequence();
            }
            if (!inspection.agent(node).getInSync()) {
                return "agent " + node + " not in sync";
            }
        }
        return null;
    }

    private void checkAlive() {
        List<ManagedProcess> all = new ArrayList<>();
        all.add(controlPlane);
        all.addAll(agents.values());
        for (ManagedProcess p : all) {
            if (!p.alive()) {
                throw new SandboxException(p.name() + " (pid " + p.pid() + ") exited:\n" + p.tail(30));
            }
        }
    }

    /** How to reach each process, for --keep. */
    public String accessHelp() {
        TestbedLayout l = testbed.layout();
        String fab = "ip netns exec " + l.fabricNamespace();
        StringBuilder s = new StringBuilder();
        s.append("control plane  pid ").append(controlPlane.pid()).append("  log ").append(controlPlane.log()).append('\n')
                .append("  ").append(fab).append(" grpcurl -plaintext ").append(l.fabricAddress()).append(':')
                .append(CONTROL_PLANE_PORT).append(" kubeverdict.v1.ControlPlaneInspection/ListNodes\n")
                .append("  ").append(fab).append(" curl -s http://").append(l.fabricAddress()).append(':')
                .append(CONTROL_PLANE_METRICS_PORT).append("/metrics\n");
        agents.forEach((node, p) -> s.append("agent ").append(node).append("  pid ").append(p.pid())
                .append("  netns ").append(l.nodeNamespace(node)).append("  log ").append(p.log()).append('\n')
                .append("  ").append(fab).append(" grpcurl -plaintext ").append(l.nodeAddress(node)).append(':')
                .append(AGENT_INSPECT_PORT).append(" kubeverdict.v1.AgentInspection/GetStatus\n")
                .append("  ").append(fab).append(" curl -s http://").append(l.nodeAddress(node)).append(':')
                .append(AGENT_METRICS_PORT).append("/metrics\n")
                .append("  ip netns exec ").append(l.nodeNamespace(node)).append(" nft list ruleset\n"));
        s.append("pods:\n");
        for (PodSpec pod : l.pods()) {
            s.append("  ").append(pod.name()).append(' ')
                    .append(pod.ips().stream().map(InetAddress::getHostAddress).toList()).append(" on ").append(pod.node())
                    .append(": ip netns exec ").append(l.podNamespace(pod.name())).append(" <command>\n");
        }
        s.append("the control plane watches ").append(assignedDir).append(" (a copy of ").append(options.manifests())
                .append(" with nodes and IPs)\n");
        return s.toString();
    }

    /** Stops the agents and the control plane (by PID), removes the namespaces and the work directory. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // we are the hook
        }
        if (inspection != null) {
            inspection.close();
        }
        matrixRuns.shutdownNow();
        running.forEach(Process::destroyForcibly);
        List<ManagedProcess> all = new ArrayList<>(agents.values());
        if (controlPlane != null) {
            all.add(controlPlane);
        }
        all.parallelStream().forEach(ManagedProcess::close);
        if (testbed != null) {
            try {
                testbed.close();
            } catch (IOException e) {
                progress.note("cleanup: " + e.getMessage());
            }
        }
        if (workDir != null) {
            try (Stream<Path> walk = Files.walk(workDir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                progress.note("cleanup of " + workDir + ": " + e.getMessage());
            }
        }
    }

    private void closeQuietly() {
        try {
            progress.note("tearing down");
            close();
        } catch (RuntimeException e) {
            System.err.println("sandbox: teardown failed: " + e);
        }
    }
}
