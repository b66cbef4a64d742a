// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.testing.tools;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Prometheus' promtool, from Debian's prometheus package unpacked (never installed as a service)
 * by scripts/setup.sh into $KUBE_VERDICT_TOOLS (default ~/.cache/kube-verdict-tools), or on the PATH.
 */
public final class Promtool {
    public record Result(int exitCode, String output) {}

    private final Path binary;

    private Promtool(Path binary) {
        this.binary = binary;
    }

    /** The promtool binary; skips the calling test, saying how to get it, when there is none. */
    public static Promtool require() {
        Optional<Path> found = find();
        assumeTrue(
                found.isPresent(),
                "promtool is not installed: scripts/setup.sh unpacks it from Debian's " + "prometheus package into "
                        + toolsDir() + " (or put promtool on the PATH)");
        return new Promtool(found.get());
    }

    /** promtool ARGS in workDir. */
    public Result run(Path workDir, String... args) {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        command.addAll(List.of(args));
        return exec(new ProcessBuilder(command).directory(workDir.toFile()), null);
    }

    /** {@code promtool check metrics} on a text-format scrape: exit 0 and no output when clean. */
    public Result checkMetrics(String scrape) {
        return exec(new ProcessBuilder(binary.toString(), "check", "metrics"), scrape);
    }

    private static Result exec(ProcessBuilder builder, String stdin) {
        try {
            Process process = builder.redirectErrorStream(true).start();
            try (OutputStream in = process.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            // A guard against a hung tool, not a timing assertion.
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(builder.command() + " did not finish");
            }
            return new Result(process.exitValue(), output);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Optional<Path> find() {
        Path unpacked = toolsDir().resolve("prometheus/usr/bin/promtool");
        if (Files.isExecutable(unpacked)) {
            return Optional.of(unpacked);
        }
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        return Stream.of(path.split(":"))
                .filter(d -> !d.isEmpty())
                .map(d -> Path.of(d, "promtool"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    private static Path toolsDir() {
        String dir = System.getenv("KUBE_VERDICT_TOOLS");
        return dir != null && !dir.isEmpty()
                ? Path.of(dir)
                : Path.of(System.getProperty("user.home"), ".cache/kube-verdict-tools");
    }
}
