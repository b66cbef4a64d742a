package io.kubeverdict.agent.metrics;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus' promtool (Debian's prometheus package), found on PATH or in the tools directory
 * scripts/setup.sh installs into; a test without it is skipped with the reason.
 */
final class Promtool {
    static final Path TOOLS_DIR = Path.of("/opt/kube-verdict-tools/bin");

    record Result(int exit, String output) {}

    private final Path binary;

    private Promtool(Path binary) {
        this.binary = binary;
    }

    /** The promtool to use, or the test is skipped. */
    static Promtool require() {
        Optional<Path> found = find();
        assumeTrue(found.isPresent(), "promtool not found on PATH or in " + TOOLS_DIR
                + " (apt-get download prometheus && dpkg-deb -x prometheus_*.deb DIR, then copy usr/bin/promtool there)");
        return new Promtool(found.get());
    }

    static Optional<Path> find() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                if (!dir.isEmpty()) {
                    candidates.add(Path.of(dir, "promtool"));
                }
            }
        }
        candidates.add(TOOLS_DIR.resolve("promtool"));
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /** {@code promtool check metrics} on a text-format scrape: exit 0 and no output when clean. */
    Result checkMetrics(String scrape) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(binary.toString(), "check", "metrics").redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(scrape.getBytes(StandardCharsets.UTF_8));
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("promtool did not finish");
        }
        return new Result(p.exitValue(), output);
    }
}
