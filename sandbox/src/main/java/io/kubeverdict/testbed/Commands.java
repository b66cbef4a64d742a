// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testbed;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short external commands (ip, sysctl) and fails loudly with their output. */
final class Commands {
    private Commands() {}

    static String run(List<String> command) throws IOException {
        return run(command, null);
    }

    /** Runs command, feeding stdin when given; throws with the command's output on a non-zero exit. */
    static String run(List<String> command, String stdin) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (OutputStream in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " timed out");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", command) + " interrupted", e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + out.strip()
                    + (stdin == null ? "" : "\ninput:\n" + stdin));
        }
        return out;
    }
}
