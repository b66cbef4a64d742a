package io.kubeverdict.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A process the sandbox started (in a network namespace via `ip netns exec`, which execs, so the
 * PID is the process itself), with its output in a log file. Stopped by PID: SIGTERM, then
 * SIGKILL after a grace period.
 */
public final class ManagedProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private ManagedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    public static ManagedProcess start(String name, String namespace, List<String> command, Path log) throws IOException {
        List<String> full = new ArrayList<>();
        if (namespace != null) {
            full.addAll(List.of("ip", "netns", "exec", namespace));
        }
        full.addAll(command);
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(full).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        return new ManagedProcess(name, p, log);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** The last lines of the log, for error messages. */
    public String tail(int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
