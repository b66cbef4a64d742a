package io.kubeverdict.sandbox;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How to start another kube-verdict process: from the two jars of a built checkout (what
 * bin/kube-verdict runs), or from one class path holding both main classes (the tests).
 */
public final class Launcher {
    static final String CONTROL_PLANE_MAIN = "io.kubeverdict.controlplane.cli.ControlPlaneMain";
    static final String AGENT_MAIN = "io.kubeverdict.agent.cli.AgentMain";
    /** System property: launch children with this class path instead of the jars. */
    public static final String CLASSPATH_PROPERTY = "kubeverdict.launch.classpath";

    private final Path home;
    private final String classpath;

    private Launcher(Path home, String classpath) {
        this.home = home;
        this.classpath = classpath;
    }

    /** The class path mode when the property is set, else the jars under the checkout. */
    public static Launcher detect() {
        String cp = System.getProperty(CLASSPATH_PROPERTY);
        if (cp != null && !cp.isEmpty()) {
            return new Launcher(home(), cp);
        }
        return new Launcher(home(), null);
    }

    /** The checkout: $KUBE_VERDICT_HOME (set by bin/kube-verdict), else found from the agent jar or working directory. */
    public static Path home() {
        String env = System.getenv("KUBE_VERDICT_HOME");
        if (env != null && !env.isEmpty()) {
            return Path.of(env);
        }
        try {
            Path code = Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = code; p != null; p = p.getParent()) {
                if (Files.isRegularFile(p.resolve("bin/kube-verdict"))) {
                    return p;
                }
            }
        } catch (URISyntaxException | RuntimeException e) {
            // fall back to the working directory
        }
        Path cwd = Path.of("").toAbsolutePath();
        return Files.isRegularFile(cwd.resolve("bin/kube-verdict")) ? cwd : cwd.getParent();
    }

    public Path homeDir() {
        return home;
    }

    /** java + options for a short-lived tool (matrix): quick start over peak speed. */
    public List<String> controlPlaneTool(String subcommand, List<String> args) {
        return command(CONTROL_PLANE_MAIN, "control-plane/target/kube-verdict-control-plane.jar",
                List.of("-XX:TieredStopAtLevel=1", "-Xmx256m"), subcommand, args);
    }

    public List<String> controlPlane(List<String> args) {
        return command(CONTROL_PLANE_MAIN, "control-plane/target/kube-verdict-control-plane.jar",
                List.of("-Xmx384m"), "control-plane", args);
    }

    public List<String> agent(List<String> args) {
        return command(AGENT_MAIN, "dataplane-jni/target/kube-verdict-agent.jar", List.of("-Xmx256m"), "agent", args);
    }

    private List<String> command(String mainClass, String jar, List<String> jvmOptions, String subcommand, List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-XX:+UseSerialGC");
        cmd.addAll(jvmOptions);
        if (classpath != null) {
            cmd.add("-cp");
            cmd.add(classpath);
            cmd.add(mainClass);
        } else {
            Path jarPath = home.resolve(jar);
            if (!Files.isRegularFile(jarPath)) {
                throw new IllegalStateException(jarPath + " is missing: build first (./mvnw -q -B -DskipTests package)");
            }
            cmd.add("-jar");
            cmd.add(jarPath.toString());
        }
        cmd.add(subcommand);
        cmd.addAll(args);
        return cmd;
    }
}
