// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.sandbox.Launcher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The class-data-sharing archives the build makes beside the process jars: the JVM maps them
 * ({@code -Xshare:on} fails the start otherwise) and takes our own classes from them, and an
 * archive that cannot be used (corrupt, or of another JVM) costs only the speed-up.
 */
class ClassDataSharingTest {
    private static final Path ROOT = Launcher.home();

    private record Run(int exit, String output) {}

    private static Run java(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {Launcher.AGENT_JAR, Launcher.CONTROL_PLANE_JAR})
    void theArchiveIsMappedAndHoldsOurClassesAndABadOneOnlyCostsTheSpeedUp(String jarInCheckout) throws Exception {
        Path jar = ROOT.resolve(jarInCheckout);
        List<String> options = Launcher.archiveOptions(jar);
        assertThat(options).as("the build made an archive beside " + jar).hasSize(2);
        String archive = options.get(0);

        Run shared = java(List.of(archive, "-Xshare:on", "-Xlog:class+load=info", "-jar", jar.toString(), "--version"));
        assertThat(shared.exit()).as(shared.output()).isZero();
        assertThat(shared.output())
                .contains("kube-verdict ")
                .containsPattern("io\\.kubeverdict\\.\\S+ source: shared objects file");

        Path corrupt = Files.createTempFile("kube-verdict", ".jsa");
        try {
            Files.writeString(corrupt, "not an archive");
            Run fallback = java(
                    List.of("-XX:SharedArchiveFile=" + corrupt, "-Xshare:auto", "-jar", jar.toString(), "--version"));
            assertThat(fallback.exit()).as(fallback.output()).isZero();
            assertThat(fallback.output()).contains("kube-verdict ");
        } finally {
            Files.deleteIfExists(corrupt);
        }
    }
}
