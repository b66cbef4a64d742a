// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the process jars come from: the class path (tests), named jars (bin/), else the checkout;
 * started with the images' JVM settings file and the archive beside a jar.
 */
class LauncherTest {
    private static final List<String> PROPERTIES =
            List.of(Launcher.CLASSPATH_PROPERTY, Launcher.CONTROL_PLANE_JAR_PROPERTY, Launcher.AGENT_JAR_PROPERTY);
    private final Map<String, String> saved = new java.util.HashMap<>();

    @TempDir
    Path dir;

    @BeforeEach
    void clear() {
        PROPERTIES.forEach(p -> {
            saved.put(p, System.getProperty(p));
            System.clearProperty(p);
        });
    }

    @AfterEach
    void restore() {
        saved.forEach((p, v) -> {
            if (v == null) {
                System.clearProperty(p);
            } else {
                System.setProperty(p, v);
            }
        });
    }

    @Test
    void theTestModeRunsBothMainClassesFromTheClassPath() {
        System.setProperty(Launcher.CLASSPATH_PROPERTY, "/some/classes");
        Launcher launcher = Launcher.fromSystemProperties();
        assertThat(launcher.controlPlane(List.of("--listen", "x:1")))
                .containsSubsequence(
                        "-cp", "/some/classes", ControlPlaneMain.class.getName(), "control-plane", "--listen", "x:1");
        assertThat(launcher.agent(List.of("--node", "n")))
                .containsSubsequence("-cp", "/some/classes", AgentMain.class.getName(), "agent", "--node", "n");
    }

    @Test
    void bothProcessesStartWithTheImagesJvmSettingsFile() {
        System.setProperty(Launcher.CLASSPATH_PROPERTY, "/some/classes");
        Launcher launcher = Launcher.fromSystemProperties();
        assertThat(Path.of(Launcher.jvmOptions().substring(1))).isRegularFile();
        assertThat(launcher.controlPlane(List.of())).contains(Launcher.jvmOptions());
        assertThat(launcher.agent(List.of())).contains(Launcher.jvmOptions());
    }

    @Test
    void namedJarsAreRunAndAMissingOneStopsBeforeAnythingStarts() throws Exception {
        Path cp = Files.createFile(dir.resolve("cp.jar"));
        Path agent = dir.resolve("agent.jar");
        System.setProperty(Launcher.CONTROL_PLANE_JAR_PROPERTY, cp.toString());
        System.setProperty(Launcher.AGENT_JAR_PROPERTY, agent.toString());
        assertThatThrownBy(Launcher::fromSystemProperties)
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining(agent + " is missing");
        Files.createFile(agent);
        Path cpArchive = Files.createFile(dir.resolve("cp.jsa"));
        Launcher launcher = Launcher.fromSystemProperties();
        assertThat(launcher.controlPlane(List.of()))
                .containsSubsequence(
                        "-XX:SharedArchiveFile=" + cpArchive, "-Xshare:auto", "-jar", cp.toString(), "control-plane");
        assertThat(launcher.agent(List.of()))
                .containsSubsequence("-jar", agent.toString(), "agent")
                .as("no archive beside the agent's jar")
                .doesNotContain("-Xshare:auto");
    }

    @Test
    void withoutPropertiesTheCheckoutsModuleJarsAreUsed() {
        Path home = Launcher.home();
        assertThat(home.resolve("bin/kube-verdict")).isRegularFile();
        Path cp = home.resolve(Launcher.CONTROL_PLANE_JAR);
        Path agent = home.resolve(Launcher.AGENT_JAR);
        if (Files.isRegularFile(cp) && Files.isRegularFile(agent)) {
            assertThat(Launcher.fromSystemProperties().describe()).isEqualTo(cp + " and " + agent);
        } else {
            assertThatThrownBy(Launcher::fromSystemProperties)
                    .hasMessageContaining("kube-verdict-")
                    .hasMessageContaining(" is missing");
        }
    }
}
