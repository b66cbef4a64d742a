// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Namespaces of earlier runs that died without cleaning up. A run's namespaces are named
 * PREFIX + owner PID + "-..."; those whose owner process is gone are leftovers. Processes still
 * running inside a leftover namespace (agents of a crashed run) are killed before it is removed.
 */
public final class Leftovers {
    private static final Path NETNS_DIR = Path.of("/run/netns");

    private Leftovers() {}

    private static final java.util.concurrent.atomic.AtomicInteger RUNS =
            new java.util.concurrent.atomic.AtomicInteger();

    /**
     * A fresh run name: prefix + PID + "-" + a counter, so a later run can tell whether the owner
     * is alive and two testbeds of one process do not collide.
     */
    public static String runName(String prefix) {
        return prefix + ProcessHandle.current().pid() + "-" + RUNS.getAndIncrement();
    }

    /** Leftover namespaces of prefix: their owner PID (parsed from the name) is not running. */
    public static List<String> find(String prefix) throws IOException {
        if (!Files.isDirectory(NETNS_DIR)) {
            return List.of();
        }
        List<String> found = new ArrayList<>();
        try (Stream<Path> entries = Files.list(NETNS_DIR)) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                String name = entry.getFileName().toString();
                if (name.startsWith(prefix) && ownerGone(name.substring(prefix.length()))) {
                    found.add(name);
                }
            }
        }
        found.sort(null);
        return found;
    }

    /** Removes the leftovers of prefix and returns their names. */
    public static List<String> remove(String prefix) throws IOException {
        List<String> leftovers = find(prefix);
        for (String ns : leftovers) {
            String pids = Commands.run(List.of("ip", "netns", "pids", ns)).strip();
            for (String pid : pids.isEmpty() ? new String[0] : pids.split("\\s+")) {
                ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        if (!leftovers.isEmpty()) {
            StringBuilder script = new StringBuilder();
            leftovers.forEach(ns -> script.append("netns del ").append(ns).append('\n'));
            Commands.run(List.of("ip", "-force", "-batch", "-"), script.toString());
        }
        return leftovers;
    }

    private static boolean ownerGone(String rest) {
        int dash = rest.indexOf('-');
        String pid = dash < 0 ? rest : rest.substring(0, dash);
        if (pid.isEmpty() || !pid.chars().allMatch(Character::isDigit)) {
            return false; // not one of ours
        }
        return processGone(Long.parseLong(pid));
    }

    /** Whether a process no longer runs: not there, dead, or killed but not yet reaped. */
    public static boolean processGone(long pid) {
        Optional<ProcessHandle> owner = ProcessHandle.of(pid);
        return owner.isEmpty() || !owner.get().isAlive() || zombie(String.valueOf(pid));
    }

    /** A killed owner whose parent has not reaped it yet still "exists": its state is Z. */
    private static boolean zombie(String pid) {
        try {
            String stat = Files.readString(Path.of("/proc", pid, "stat"));
            int end = stat.lastIndexOf(')');
            return end > 0 && stat.length() > end + 2 && stat.charAt(end + 2) == 'Z';
        } catch (IOException e) {
            return true; // gone between the two looks
        }
    }
}
