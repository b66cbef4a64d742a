// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.controlplane.tools.OfflineCluster;
import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testbed.Testbed;
import io.kubeverdict.testbed.TestbedLayout;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The whole system on one machine: the manifests' pods as network namespaces on node namespaces
 * (a {@link Testbed}; hostNetwork pods in their node's, at its address), the control plane as a process in the fabric namespace watching a copy of
 * the manifests in which every pod has its node and IPs ({@link ManifestCopy}), one agent process
 * per node inside that node's namespace ({@link SandboxProcesses}), and probes of every pod pair
 * compared with the policy engine on the same copy ({@link PairProbes}, {@link Engine}).
 *
 * <p>This class only puts the parts together in order and takes them apart again
 * ({@link Teardown}). Processes reach each other over the fabric bridge; nothing is added to the
 * root namespace; the sandbox reaches the inspection services from a thread inside the fabric.
 */
public final class Sandbox implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration CONVERGE_TIMEOUT = Duration.ofSeconds(60);

    private final SandboxOptions options;
    private final Teardown teardown;
    private ManifestCopy copy;
    private Engine engine;
    private List<ServePort> targets;
    private Testbed testbed;
    private SandboxProcesses processes;
    private Convergence convergence;
    private PairProbes probes;
    private Inspection inspection;

    private Sandbox(SandboxOptions options, Teardown teardown) {
        this.options = options;
        this.teardown = teardown;
    }

    /** Builds and starts everything, and returns once every agent enforces the manifests. */
    public static Sandbox start(SandboxOptions options, Progress progress) throws Exception {
        RootCheck.require();
        Launcher launcher = Launcher.fromSystemProperties();
        Sandbox sandbox = new Sandbox(options, new Teardown(progress));
        try {
            sandbox.startAll(launcher, progress);
            return sandbox;
        } catch (Exception | Error e) {
            sandbox.close();
            throw e;
        }
    }

    private void startAll(Launcher launcher, Progress progress) throws Exception {
        progress.step("reading manifests from " + options.manifests());
        WorkDir workDir = WorkDir.create();
        teardown.add("the work directory", workDir::close);
        copy = ManifestCopy.write(options, workDir.manifests());
        engine = new Engine(copy.dir(), progress);
        engine.reload();
        targets = options.targets(copy.pods());
        Placement placement = copy.placement();
        progress.note(copy.pods().size() + " pods"
                + (placement.hostNetwork().isEmpty()
                        ? ""
                        : " (" + placement.hostNetwork().size() + " hostNetwork)") + " on "
                + placement.nodes().size()
                + " nodes " + placement.nodes()
                + (placement.nodeIps().isEmpty() ? "" : " with addresses " + placement.nodeIps())
                + "; manifests with nodes and IPs in " + copy.dir());
        if (!placement.podRanges().of().isEmpty()) {
            progress.note("pod ranges (the agents' pod address guard) "
                    + placement.podRanges().of());
        }
        placement.podRanges().none().forEach((node, why) -> progress.note(node + ": " + why + "; its guard is off"));

        progress.step("creating nodes and pods as network namespaces, servers on " + BedPlan.served(targets));
        testbed = Testbed.create(
                options.prefix(),
                placement.nodes(),
                BedPlan.nodeIps(placement),
                BedPlan.pods(copy.pods(), placement, targets));
        teardown.add("the testbed", testbed::close);
        TestbedLayout layout = testbed.layout();

        progress.step(
                "starting the control plane and " + placement.nodes().size() + " agents from " + launcher.describe());
        processes = new SandboxProcesses(launcher, layout, workDir, options::agentArgs);
        teardown.add("the processes", processes::close);
        processes.start();
        Map<String, String> agentAddresses = new LinkedHashMap<>();
        layout.nodes().forEach(node -> agentAddresses.put(node, processes.agentInspectAddress(node)));
        inspection = new Inspection(
                new Inspection.InNamespace() {
                    @Override
                    public <T> T call(Callable<T> work) throws Exception {
                        return testbed.callIn(layout.fabricNamespace(), work);
                    }
                },
                processes.controlPlaneAddress(),
                agentAddresses);
        teardown.add("the inspection clients", inspection::close);
        convergence = new Convergence(inspection, processes, placement.nodes());
        probes = new PairProbes(testbed, engine, options.probeTimeout(), progress);

        progress.step("waiting until every agent is in sync");
        convergence.await(copy.revision(), START_TIMEOUT);
        progress.done();
    }

    /** The probes: those asked for, else every container port of the pods. */
    public List<ServePort> probes() {
        return targets;
    }

    /** Probes every requested port, comparing with the engine. */
    public List<ProbeResult> probeAll() throws Exception {
        return probe(targets);
    }

    /** Probes these ports, comparing with the engine; every pod the sandbox runs must be in the manifests. */
    public List<ProbeResult> probe(List<ServePort> which) throws Exception {
        if (!copy.away().isEmpty()) {
            throw new SandboxException("pods " + copy.away() + " are away from the manifests: every pod the"
                    + " sandbox runs is probed, so they must be back first");
        }
        return probes.probe(which);
    }

    /**
     * Pods the sandbox runs that the manifests last read leave out: a pod may leave the manifests and
     * come back as it was (same node, addresses and ports), keeping its namespace meanwhile, as a
     * pod that appears before the control plane knows it.
     */
    public List<String> away() {
        return copy.away();
    }

    /**
     * Re-reads the manifest directory and hands the control plane the new copy, then waits until
     * every agent has applied it. Returns false, changing nothing, when the pods themselves changed
     * (added, moved, new ports or IPs; removed ones are {@link #away()}): that needs a new sandbox.
     */
    public boolean reload() throws Exception {
        if (!update()) {
            return false;
        }
        awaitConverged();
        return true;
    }

    /**
     * The first half of {@link #reload()}: re-reads the manifest directory, writes the new copy
     * (the control plane sees it whenever it watches) and recomputes the expectation, without
     * waiting. Returns false, changing nothing, when the pods themselves changed.
     */
    public boolean update() throws Exception {
        if (!stage()) {
            return false;
        }
        publish();
        return true;
    }

    /**
     * Re-reads the manifest directory into a staged copy the control plane does not watch and
     * recomputes the expectation from it: a test learns what the change will do before the change
     * can take effect, then {@link #publish()}es it. Returns false, changing nothing, when the pods
     * themselves changed.
     */
    public boolean stage() throws Exception {
        if (!copy.stage()) {
            return false;
        }
        engine.reload(copy.stagedDir());
        return true;
    }

    /** Writes the staged copy into the directory the control plane watches. */
    public void publish() throws Exception {
        copy.publish();
    }

    /** The second half of {@link #reload()}: waits until every agent enforces the copy last written. */
    public void awaitConverged() throws InterruptedException {
        convergence.await(copy.revision(), CONVERGE_TIMEOUT);
    }

    /**
     * Waits until the control plane has published the copy last written and the agents of these
     * nodes enforce it (others may be down or cut off).
     */
    public void awaitConverged(Collection<String> nodes) throws InterruptedException {
        convergence.await(copy.revision(), CONVERGE_TIMEOUT, nodes);
    }

    /** The revision of the copy last written, which the control plane reports once it published it. */
    public String revision() {
        return copy.revision();
    }

    /** SIGKILL to the control plane (the agents keep enforcing what they have); returns once it is gone. */
    public void killControlPlane() throws InterruptedException {
        processes.killControlPlane();
    }

    /** Starts the control plane again on the same directory, without waiting for it. */
    public void startControlPlane() throws IOException {
        processes.startControlPlane();
    }

    /** SIGKILL to node's agent, leaving its nft table behind as a crash does; returns once it is gone. */
    public void killAgent(String node) throws InterruptedException {
        processes.killAgent(node);
    }

    /** Starts node's agent again with the same arguments, without waiting for it. */
    public void startAgent(String node) throws IOException {
        processes.startAgent(node);
    }

    /**
     * The command line of a kube-verdict CLI command (status, wait, ...) that asks this sandbox's
     * control plane, run inside the fabric namespace as a process of its own.
     */
    public List<String> cliCommand(String subcommand, String... args) {
        return processes.cli(subcommand, List.of(args));
    }

    /** The control-plane process (its PID, log). */
    public ManagedProcess controlPlane() {
        return processes.controlPlane();
    }

    /** The engine's cluster on the copy last written, for tests that compose expectations per node. */
    OfflineCluster expectedCluster() {
        return engine.cluster();
    }

    /** The inspection clients, for tests that look at the processes' own view. */
    Inspection inspection() {
        return inspection;
    }

    /**
     * The text of node's agent /metrics, fetched by a thread inside the fabric namespace (where it
     * listens; HttpURLConnection connects on the calling thread).
     */
    public String agentMetrics(String node) throws Exception {
        String url =
                "http://" + testbed.layout().nodeAddress(node) + ":" + SandboxProcesses.AGENT_METRICS_PORT + "/metrics";
        return testbed.callIn(testbed.layout().fabricNamespace(), () -> {
            HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(5000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } finally {
                c.disconnect();
            }
        });
    }

    /** The agent process of node (its PID, log), e.g. for a test that stops it. */
    public ManagedProcess agent(String node) {
        return processes.agent(node);
    }

    /**
     * Stops node's agent (by PID: SIGTERM, then SIGKILL) if it still runs, starts a new one with
     * the same arguments and waits until every agent is in sync again.
     */
    public void restartAgent(String node) throws Exception {
        processes.restartAgent(node);
        convergence.await(copy.revision(), START_TIMEOUT);
    }

    public Path assignedManifests() {
        return copy.dir();
    }

    public Testbed testbed() {
        return testbed;
    }

    public Placement placement() {
        return copy.placement();
    }

    /**
     * Forwards {@code listen} (on this machine) to the control plane's console, as {@code kubectl
     * port-forward} would; stopped with the sandbox. Returns the URL to open.
     */
    public String forwardConsole(InetSocketAddress listen) throws IOException {
        String fabric = testbed.layout().fabricNamespace();
        ConsoleForward forward = ConsoleForward.start(
                listen,
                () -> testbed.callIn(
                        fabric, () -> new Socket(InetAddress.getLoopbackAddress(), SandboxProcesses.CONSOLE_PORT)));
        teardown.add("the console forward", forward::close);
        String host = listen.getAddress().getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + forward.port() + "/";
    }

    /** How to reach each process, for --keep. */
    public String accessHelp() {
        return AccessHelp.render(testbed.layout(), processes, copy.dir(), options.manifests())
                + CliRecipes.render(testbed.layout(), processes, targets, engine.aPolicy());
    }

    /** Stops the agents and the control plane (by PID), removes the namespaces and the work directory. */
    @Override
    public void close() {
        teardown.close();
    }
}
