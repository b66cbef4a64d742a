// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.testbed.Leftovers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The sandbox's temp directory, kube-verdict-sandbox-PID-…: the manifest copy the control plane
 * watches and the processes' logs. Removed on close; directories of runs whose process is gone
 * (a crash left them) are removed before a new one is made.
 */
final class WorkDir implements AutoCloseable {
    static final String PREFIX = "kube-verdict-sandbox-";

    private final Path path;

    private WorkDir(Path path) {
        this.path = path;
    }

    static WorkDir create() throws IOException {
        removeStale(Path.of(System.getProperty("java.io.tmpdir")));
        return new WorkDir(
                Files.createTempDirectory(PREFIX + ProcessHandle.current().pid() + "-"));
    }

    Path manifests() {
        return path.resolve("manifests");
    }

    /** The agents' state directory, as a node's hostPath: each agent keeps its node's file there across restarts. */
    Path agentState() {
        return path.resolve("agent-state");
    }

    Path log(String name) {
        return path.resolve("logs").resolve(name + ".log");
    }

    private static void removeStale(Path tmp) throws IOException {
        try (Stream<Path> entries = Files.list(tmp)) {
            for (Path dir : entries.filter(p -> p.getFileName().toString().startsWith(PREFIX))
                    .toList()) {
                String rest = dir.getFileName().toString().substring(PREFIX.length());
                int dash = rest.indexOf('-');
                if (dash > 0
                        && rest.substring(0, dash).chars().allMatch(Character::isDigit)
                        && Leftovers.processGone(Long.parseLong(rest.substring(0, dash)))) {
                    delete(dir);
                }
            }
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Override
    public void close() throws IOException {
        delete(path);
    }
}
