// SPDX-License-Identifier: Apache-2.0
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
 * SIGKILL after a grace period; or killed at once ({@link #kill()}), as a crash would end it.
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

    public static ManagedProcess start(String name, String namespace, List<String> command, Path log)
            throws IOException {
        List<String> full = new ArrayList<>();
        if (namespace != null) {
            full.addAll(List.of("ip", "netns", "exec", namespace));
        }
        full.addAll(command);
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(full)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
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

    /**
     * SIGKILL by PID, as a crash or the OOM killer ends a process (no shutdown hook runs), and
     * waits until it is gone, so the kernel has released its sockets and its queue binding.
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new SandboxException(name + " (pid " + pid() + ") still runs 30 s after SIGKILL");
        }
    }

    /** Resident memory of the process in KiB (VmRSS of /proc/PID/status), or -1 once it is gone. */
    public long rssKib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid()), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(
                            line.substring("VmRSS:".length()).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone, or a kernel without VmRSS
        }
        return -1;
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
