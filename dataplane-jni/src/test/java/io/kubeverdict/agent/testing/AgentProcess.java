// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.agent.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real agent as a separate process inside a node namespace, started the way the sandbox does
 * (ip netns exec NODE java ... agent ...), with this test's class path. Its log goes to a file
 * that {@link #log()} returns for failure messages.
 */
public final class AgentProcess implements AutoCloseable {
    private final Process process;
    private final Path log;
    /** The state directory this process made for itself (deleted at close), or null when the test gave one. */
    private final Path ownStateDir;

    private AgentProcess(Process process, Path log, Path ownStateDir) {
        this.process = process;
        this.log = log;
        this.ownStateDir = ownStateDir;
    }

    /**
     * Without {@code --state-dir} among the arguments the agent gets a fresh, empty state directory
     * of its own: it never reads another run's state, and never writes the machine's /var/lib.
     */
    public static AgentProcess start(String netns, List<String> agentArgs) throws IOException {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        List<String> command = new ArrayList<>(List.of(
                "ip",
                "netns",
                "exec",
                netns,
                java,
                "--enable-native-access=ALL-UNNAMED",
                "-Dkubeverdict.log.level=DEBUG",
                "-cp",
                System.getProperty("java.class.path"),
                "io.kubeverdict.agent.cli.AgentMain",
                "agent"));
        command.addAll(agentArgs);
        Path ownStateDir = null;
        if (!agentArgs.contains("--state-dir")) {
            ownStateDir = Files.createTempDirectory("kvt-agent-state");
            command.addAll(List.of("--state-dir", ownStateDir.toString()));
        }
        Path log = Files.createTempFile("kvt-ag-agent", ".log");
        // ip netns exec execs the command: this process is the agent's JVM, so signals reach it.
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new AgentProcess(p, log, ownStateDir);
    }

    /** The agent JVM's pid (ip netns exec execs it), for jcmd. */
    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** SIGKILL: no shutdown hook runs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGTERM: the agent's clean shutdown; returns its exit code. */
    public int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        return process.exitValue();
    }

    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
        new File(log.toString()).delete();
        if (ownStateDir != null) {
            deleteTree(ownStateDir);
        }
    }

    private static void deleteTree(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind; nothing to fail a test for
        }
    }
}
