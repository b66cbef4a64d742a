// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/** The benchmarks' manifest files: written whole, and their temporary directories removed. */
public final class BenchFiles {
    private BenchFiles() {}

    /** Atomically, so the sandbox watching the directory never reads half a file. */
    public static void write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Best effort: a temporary directory of the benchmark's own. */
    public static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // what is left is in the system's temporary directory
        }
    }
}
