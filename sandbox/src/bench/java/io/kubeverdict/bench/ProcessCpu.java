// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A process's CPU time by thread name, in nanoseconds, from /proc/PID/task/TID/schedstat (its first
 * field is the time on a CPU, in ns; /proc/PID/stat's ticks are 10 ms). Threads of one name are
 * added up; a thread that ends between two readings loses its time since the first.
 */
final class ProcessCpu {
    private ProcessCpu() {}

    static Map<String, Long> byThread(long pid) throws IOException {
        Map<String, Long> nanos = new HashMap<>();
        if (pid <= 0) {
            return nanos;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks) {
                try {
                    String name = Files.readString(task.resolve("comm")).strip();
                    String schedstat = Files.readString(task.resolve("schedstat"));
                    long onCpu = Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
                    nanos.merge(name, onCpu, Long::sum);
                } catch (NoSuchFileException ended) {
                    // the thread ended while we listed
                }
            }
        }
        return nanos;
    }

    /** All the process's threads, in ns. */
    static long total(long pid) throws IOException {
        return byThread(pid).values().stream().mapToLong(Long::longValue).sum();
    }

    /** What each thread name used between two readings (names absent before count from zero). */
    static Map<String, Long> since(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> used = new HashMap<>();
        after.forEach((name, n) -> {
            long d = n - before.getOrDefault(name, 0L);
            if (d > 0) {
                used.put(name, d);
            }
        });
        return used;
    }
}
