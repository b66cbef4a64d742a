// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.TestbedLayout;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The sandbox's processes: the control plane inside the fabric namespace on the bridge address,
 * watching the manifest copy, and one agent per node inside that node's namespace on the node's
 * address. Each is started by PID with its output in a log of the work directory. A fault test
 * may kill one (SIGKILL) and start it again later with the same arguments; until then it is
 * <em>down</em>, and liveness checks leave it out.
 */
final class SandboxProcesses implements AutoCloseable {
    static final int CONTROL_PLANE_PORT = 7443;
    static final int CONTROL_PLANE_METRICS_PORT = 9090;
    static final int AGENT_METRICS_PORT = 9101;
    static final int AGENT_INSPECT_PORT = 9102;
    /** The control plane's console, on the fabric namespace's loopback (reached through {@link ConsoleForward}). */
    static final int CONSOLE_PORT = 9180;

    private final Launcher launcher;
    private final TestbedLayout layout;
    private final WorkDir workDir;
    private final Function<String, List<String>> agentArgs;
    private ManagedProcess controlPlane;
    private boolean controlPlaneDown;
    private final Map<String, ManagedProcess> agents = new LinkedHashMap<>();
    private final Set<String> agentsDown = new HashSet<>();

    /** agentArgs: the extra arguments of a node's agent. */
    SandboxProcesses(
            Launcher launcher, TestbedLayout layout, WorkDir workDir, Function<String, List<String>> agentArgs) {
        this.launcher = launcher;
        this.layout = layout;
        this.workDir = workDir;
        this.agentArgs = agentArgs;
    }

    /** Starts the control plane and every node's agent, without waiting for them. */
    void start() throws IOException {
        startControlPlane();
        for (String node : layout.nodes()) {
            startAgent(node);
        }
    }

    /** Starts the control plane (again, after {@link #killControlPlane()}), without waiting for it. */
    synchronized void startControlPlane() throws IOException {
        if (controlPlane != null && controlPlane.alive()) {
            throw new IllegalStateException("the control plane runs already (pid " + controlPlane.pid() + ")");
        }
        controlPlane = ManagedProcess.start(
                "control-plane",
                layout.fabricNamespace(),
                launcher.controlPlane(List.of(
                        "--manifests",
                        workDir.manifests().toString(),
                        "--listen",
                        controlPlaneAddress(),
                        // Plaintext on the fabric bridge, on purpose: only the sandbox's namespaces reach it.
                        "--insecure",
                        // No cluster to review tokens: the sandbox's agents are trusted by their namespaces.
                        "--auth",
                        "none",
                        "--metrics-bind-address",
                        layout.fabricAddress() + ":" + CONTROL_PLANE_METRICS_PORT,
                        "--console-listen",
                        "127.0.0.1:" + CONSOLE_PORT)),
                workDir.log("control-plane"));
        controlPlaneDown = false;
    }

    /** SIGKILL to the control plane; returns once it is gone. */
    void killControlPlane() throws InterruptedException {
        ManagedProcess p;
        synchronized (this) {
            controlPlaneDown = true;
            p = controlPlane;
        }
        p.kill();
    }

    /** Starts node's agent (again, after {@link #killAgent}), without waiting for it. */
    synchronized void startAgent(String node) throws IOException {
        ManagedProcess old = agents.get(node);
        if (old != null && old.alive()) {
            throw new IllegalStateException("the agent of " + node + " runs already (pid " + old.pid() + ")");
        }
        String address = layout.nodeAddress(node);
        List<String> args = new ArrayList<>(List.of(
                "--node",
                node,
                "--control-plane",
                controlPlaneAddress(),
                "--metrics-bind-address",
                address + ":" + AGENT_METRICS_PORT,
                "--inspect-listen",
                agentInspectAddress(node),
                "--state-dir",
                workDir.agentState().toString(),
                "--insecure",
                "--auth",
                "none"));
        args.addAll(agentArgs.apply(node));
        agents.put(
                node,
                ManagedProcess.start(
                        "agent " + node,
                        layout.nodeNamespace(node),
                        launcher.agent(args),
                        workDir.log("agent-" + node)));
        agentsDown.remove(node);
    }

    /** SIGKILL to node's agent; returns once it is gone. Its nft table stays, as after a crash. */
    void killAgent(String node) throws InterruptedException {
        ManagedProcess p;
        synchronized (this) {
            p = agent(node);
            agentsDown.add(node);
        }
        p.kill();
    }

    /** A kube-verdict CLI command line run in the fabric namespace, asking this sandbox's control plane. */
    List<String> cli(String subcommand, List<String> args) {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of("--control-plane", controlPlaneAddress()));
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", layout.fabricNamespace()));
        cmd.addAll(launcher.cli(subcommand, all));
        return cmd;
    }

    /** The CLI as a user runs it (bin/kube-verdict), for the recipes `sandbox --keep` prints. */
    List<String> userCli() {
        return launcher.userCli();
    }

    String controlPlaneAddress() {
        return layout.fabricAddress() + ":" + CONTROL_PLANE_PORT;
    }

    String agentInspectAddress(String node) {
        return layout.nodeAddress(node) + ":" + AGENT_INSPECT_PORT;
    }

    synchronized ManagedProcess controlPlane() {
        return controlPlane;
    }

    synchronized ManagedProcess agent(String node) {
        ManagedProcess p = agents.get(node);
        if (p == null) {
            throw new IllegalArgumentException("no agent for node " + node);
        }
        return p;
    }

    synchronized Map<String, ManagedProcess> agents() {
        return new LinkedHashMap<>(agents);
    }

    /** Stops node's agent (by PID: SIGTERM, then SIGKILL) if it still runs and starts a new one with the same arguments. */
    void restartAgent(String node) throws IOException {
        agent(node).close();
        startAgent(node);
    }

    /** Throws, with the end of its log, when a process that should run has exited. */
    void checkAlive() {
        checkAlive(layout.nodes());
    }

    /** Like {@link #checkAlive()} for the control plane and the agents of nodes only. */
    synchronized void checkAlive(Collection<String> nodes) {
        List<ManagedProcess> expected = new ArrayList<>();
        if (controlPlane != null && !controlPlaneDown) {
            expected.add(controlPlane);
        }
        nodes.stream()
                .filter(n -> !agentsDown.contains(n))
                .map(agents::get)
                .filter(Objects::nonNull)
                .forEach(expected::add);
        for (ManagedProcess p : expected) {
            if (!p.alive()) {
                throw new SandboxException(p.name() + " (pid " + p.pid() + ") exited:\n" + p.tail(30));
            }
        }
    }

    /** The last lines of every log, for an error message. */
    String logTails(int lines) {
        StringBuilder s = new StringBuilder();
        all().forEach(p ->
                s.append("\n--- ").append(p.name()).append(" log ---\n").append(p.tail(lines)));
        return s.toString();
    }

    private synchronized List<ManagedProcess> all() {
        List<ManagedProcess> all = new ArrayList<>();
        if (controlPlane != null) {
            all.add(controlPlane);
        }
        all.addAll(agents.values());
        return all;
    }

    /** Stops every process by PID, in parallel (each may take its grace period). */
    @Override
    public void close() {
        all().parallelStream().forEach(ManagedProcess::close);
    }
}
