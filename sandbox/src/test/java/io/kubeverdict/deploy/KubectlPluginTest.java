// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.sandbox.Launcher;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/kubectl-verdict is kube-verdict as kubectl runs a plugin: found on PATH, often as a symlink
 * into the checkout. Its usage comes from bin/kube-verdict itself (no JVM, no jars needed).
 */
class KubectlPluginTest {
    @TempDir
    Path path;

    @Test
    void aSymlinkOnPathRunsTheCheckoutsLauncher() throws Exception {
        Path plugin = Launcher.home().resolve("bin/kubectl-verdict");
        assertThat(Files.isExecutable(plugin)).as(plugin + " is executable").isTrue();
        Files.createSymbolicLink(path.resolve("kubectl-verdict"), plugin);
        // PATH holds only the link's directory and the system's: the launcher must find the checkout itself.
        ProcessBuilder run = new ProcessBuilder("sh", "-c", "kubectl-verdict --help")
                .redirectErrorStream(true)
                .directory(path.toFile());
        run.environment().put("PATH", path + ":/usr/bin:/bin");
        Process started = run.start();
        String out = new String(started.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(started.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(started.exitValue()).as(out).isZero();
        assertThat(out).contains("Usage: kube-verdict", "kubectl verdict", "completion", "version");
    }
}
