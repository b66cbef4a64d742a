package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.TestbedLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The sandbox's processes: the control plane inside the fabric namespace on the bridge address,
 * watching the manifest copy, and one agent per node inside that node's namespace on the node's
 * address. Each is started by PID with its output in a log of the work directory.
 */
final class SandboxProcesses implements AutoCloseable {
    static final int CONTROL_PLANE_PORT = 7443;
    static final int CONTROL_PLANE_METRICS_PORT = 9090;
    static final int AGENT_METRICS_PORT = 9101;
    static final int AGENT_INSPECT_PORT = 9102;

    private final Launcher launcher;
    private final TestbedLayout layout;
    private final WorkDir workDir;
    private ManagedProcess controlPlane;
    private final Map<String, ManagedProcess> agents = new LinkedHashMap<>();

    SandboxProcesses(Launcher launcher, TestbedLayout layout, WorkDir workDir) {
        this.launcher = launcher;
        this.layout = layout;
        this.workDir = workDir;
    }

    /** Starts the control plane and every node's agent, without waiting for them. */
    void start() throws IOException {
        controlPlane = ManagedProcess.start("control-plane", layout.fabricNamespace(), launcher.controlPlane(List.of(
                "--manifests", workDir.manifests().toString(),
                "--listen", controlPlaneAddress(),
                "--metrics-bind-address", layout.fabricAddress() + ":" + CONTROL_PLANE_METRICS_PORT)),
                workDir.log("control-plane"));
        for (String node : layout.nodes()) {
            agents.put(node, startAgent(node));
        }
    }

    private ManagedProcess startAgent(String node) throws IOException {
        String address = layout.nodeAddress(node);
        return ManagedProcess.start("agent " + node, layout.nodeNamespace(node), launcher.agent(List.of(
                "--node", node,
                "--control-plane", controlPlaneAddress(),
                "--metrics-bind-address", address + ":" + AGENT_METRICS_PORT,
                "--inspect-listen", agentInspectAddress(node))),
                workDir.log("agent-" + node));
    }

    String controlPlaneAddress() {
        return layout.fabricAddress() + ":" + CONTROL_PLANE_PORT;
    }

    String agentInspectAddress(String node) {
        return layout.nodeAddress(node) + ":" + AGENT_INSPECT_PORT;
    }

    ManagedProcess controlPlane() {
        return controlPlane;
    }

    ManagedProcess agent(String node) {
        return agents.get(node);
    }

    Map<String, ManagedProcess> agents() {
        return agents;
    }

    /** Stops node's agent (by PID: SIGTERM, then SIGKILL) if it still runs and starts a new one with the same arguments. */
    void restartAgent(String node) throws IOException {
        ManagedProcess old = agents.get(node);
        if (old == null) {
            throw new IllegalArgumentException("no agent for node " + node);
        }
        old.close();
        agents.put(node, startAgent(node));
    }

    /** Throws, with the end of its log, when a process has exited. */
    void checkAlive() {
        for (ManagedProcess p : all()) {
            if (!p.alive()) {
                throw new SandboxException(p.name() + " (pid " + p.pid() + ") exited:\n" + p.tail(30));
            }
        }
    }

    /** The last lines of every log, for an error message. */
    String logTails(int lines) {
        StringBuilder s = new StringBuilder();
        all().forEach(p -> s.append("\n--- ").append(p.name()).append(" log ---\n").append(p.tail(lines)));
        return s.toString();
    }

    private List<ManagedProcess> all() {
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
