// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/bench-connrate compiles its sources only when it runs; this keeps them compiling against
 * today's code so the benchmark cannot rot unnoticed (it is not run here).
 */
class BenchSourcesCompileTest {
    private static final Path BENCH = Path.of("src/bench");

    @Test
    void javaSourcesCompileAgainstTheAgent(@TempDir Path out) throws IOException {
        List<String> args = new ArrayList<>(
                List.of("--release", "17", "-d", out.toString(), "-cp", System.getProperty("java.class.path")));
        try (Stream<Path> files = Files.walk(BENCH.resolve("java"))) {
            files.filter(p -> p.toString().endsWith(".java")).forEach(p -> args.add(p.toString()));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
        assertThat(rc).as(errors.toString()).isZero();
    }

    @Test
    void theMinimalNfqueueConsumerCompiles(@TempDir Path out) throws Exception {
        Process gcc = new ProcessBuilder(
                        "gcc",
                        "-O2",
                        "-Wall",
                        "-Werror",
                        "-o",
                        out.resolve("nfq_accept").toString(),
                        BENCH.resolve("c/nfq_accept.c").toString(),
                        "-lnetfilter_queue",
                        "-lmnl")
                .redirectErrorStream(true)
                .start();
        String output = new String(gcc.getInputStream().readAllBytes());
        assertThat(gcc.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(gcc.exitValue()).as(output).isZero();
    }
}
