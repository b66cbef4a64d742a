// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.sandbox.cli.KubeVerdictMain;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place that knows where the real control-plane and agent processes come from, and how
 * to start them: as the images do (the JVM settings of {@value #JVM_OPTIONS_FILE}, the class-data
 * archive beside the jar), plus the sandbox's own serial GC and heap cap (many JVMs share one
 * machine). The sandbox runs the jars the images ship, found in this order:
 * <ol>
 *   <li>{@value #CLASSPATH_PROPERTY}: both main classes from this class path instead of jars
 *       (the tests: their class path is the build's current code, never a stale jar);
 *   <li>{@value #CONTROL_PLANE_JAR_PROPERTY} and {@value #AGENT_JAR_PROPERTY} naming the jars
 *       (bin/kube-verdict and bin/bench-connrate set them);
 *   <li>else where the module builds put them in the checkout ({@link #CONTROL_PLANE_JAR},
 *       {@link #AGENT_JAR} under {@link #home()}).
 * </ol>
 */
public final class Launcher {
    public static final String CLASSPATH_PROPERTY = "kubeverdict.launch.classpath";
    public static final String CONTROL_PLANE_JAR_PROPERTY = "kubeverdict.control-plane.jar";
    public static final String AGENT_JAR_PROPERTY = "kubeverdict.agent.jar";
    /** The control-plane module's jar, relative to the checkout; its image copies the same file. */
    public static final String CONTROL_PLANE_JAR = "control-plane/target/kube-verdict-control-plane.jar";
    /** The agent module's jar, relative to the checkout; its image copies the same file. */
    public static final String AGENT_JAR = "dataplane-jni/target/kube-verdict-agent.jar";

    private final String classpath;
    private final Path controlPlaneJar;
    private final Path agentJar;

    private Launcher(String classpath, Path controlPlaneJar, Path agentJar) {
        this.classpath = classpath;
        this.controlPlaneJar = controlPlaneJar;
        this.agentJar = agentJar;
    }

    /**
     * From the system properties (see the class comment).
     *
     * @throws SandboxException when a jar or {@value #JVM_OPTIONS_FILE} is missing, before anything is started
     */
    public static Launcher fromSystemProperties() {
        Path options = home().resolve(JVM_OPTIONS_FILE);
        if (!Files.isRegularFile(options)) {
            throw new SandboxException(
                    options + " is missing: the processes' JVM settings (set KUBE_VERDICT_HOME to the checkout)");
        }
        String cp = System.getProperty(CLASSPATH_PROPERTY);
        if (cp != null && !cp.isEmpty()) {
            return new Launcher(cp, null, null);
        }
        Launcher jars = new Launcher(
                null, jar(CONTROL_PLANE_JAR_PROPERTY, CONTROL_PLANE_JAR), jar(AGENT_JAR_PROPERTY, AGENT_JAR));
        for (Path jar : List.of(jars.controlPlaneJar, jars.agentJar)) {
            if (!Files.isRegularFile(jar)) {
                throw new SandboxException(jar + " is missing: build first (./mvnw -q -B -DskipTests package)");
            }
        }
        return jars;
    }

    private static Path jar(String property, String inCheckout) {
        String named = System.getProperty(property);
        return named != null && !named.isEmpty() ? Path.of(named) : home().resolve(inCheckout);
    }

    /**
     * The checkout: $KUBE_VERDICT_HOME (bin/kube-verdict sets it), else the nearest directory
     * holding bin/kube-verdict above this code (a jar or classes under target/), else above the
     * working directory.
     */
    public static Path home() {
        String env = System.getenv("KUBE_VERDICT_HOME");
        if (env != null && !env.isEmpty()) {
            return Path.of(env);
        }
        try {
            Path found = checkoutAbove(Path.of(Launcher.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI()));
            if (found != null) {
                return found;
            }
        } catch (URISyntaxException | RuntimeException e) {
            // fall back to the working directory
        }
        Path cwd = Path.of("").toAbsolutePath();
        Path found = checkoutAbove(cwd);
        return found != null ? found : cwd;
    }

    private static Path checkoutAbove(Path start) {
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("bin/kube-verdict"))) {
                return p;
            }
        }
        return null;
    }

    /** Where the processes come from, for the progress output. */
    public String describe() {
        return classpath != null ? "the class path" : controlPlaneJar + " and " + agentJar;
    }

    public List<String> controlPlane(List<String> args) {
        return command(ControlPlaneMain.class, controlPlaneJar, "-Xmx384m", "control-plane", args);
    }

    /** The control-plane jar's CLI ({@code status}, {@code wait}, ...) as a process of its own. */
    public List<String> cli(String subcommand, List<String> args) {
        return command(ControlPlaneMain.class, controlPlaneJar, "-Xmx128m", subcommand, args);
    }

    /**
     * How a user runs the kube-verdict CLI, as the words of a command line: the checkout's
     * bin/kube-verdict, or with {@value #CLASSPATH_PROPERTY} (the tests) java with the developer
     * CLI's main class on that class path.
     */
    public List<String> userCli() {
        if (classpath != null) {
            return List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    classpath,
                    KubeVerdictMain.class.getName());
        }
        return List.of(home().resolve("bin/kube-verdict").toString());
    }

    public List<String> agent(List<String> args) {
        return command(AgentMain.class, agentJar, "-Xmx256m", "agent", args);
    }

    /**
     * The JVM settings both processes run with, relative to the checkout: one java @argfile that
     * the images' entry points, bin/kube-verdict and bin/bench-startup pass too (EntryPointsTest),
     * so they are written once. The child JVM reads it: no second parser of its syntax here.
     */
    public static final String JVM_OPTIONS_FILE = "deploy/jvm.options";

    /** The {@value #JVM_OPTIONS_FILE} argument of a java command line. */
    public static String jvmOptions() {
        return "@" + home().resolve(JVM_OPTIONS_FILE);
    }

    /**
     * The class-data-sharing archive the build made beside the jar (KIND.jsa), when there is one: a
     * faster start. {@code -Xshare:auto}: an archive of another JVM, or of an older jar, is ignored.
     */
    public static List<String> archiveOptions(Path jar) {
        String name = jar.getFileName().toString();
        Path archive = jar.resolveSibling(name.replaceFirst("\\.jar$", "") + ".jsa");
        return Files.isRegularFile(archive) ? List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto") : List.of();
    }

    private List<String> command(Class<?> main, Path jar, String heap, String subcommand, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                heap));
        cmd.add(jvmOptions());
        if (classpath != null) {
            cmd.addAll(List.of("-cp", classpath, main.getName()));
        } else {
            cmd.addAll(archiveOptions(jar));
            cmd.addAll(List.of("-jar", jar.toString()));
        }
        cmd.add(subcommand);
        cmd.addAll(args);
        return cmd;
    }
}
