package io.kubeverdict.sandbox;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The one place that knows where the real control-plane and agent processes come from, and how
 * to start them. The sandbox runs the jars the images ship, found in this order:
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
     * @throws SandboxException when a jar is missing, before anything is started
     */
    public static Launcher fromSystemProperties() {
        String cp = System.getProperty(CLASSPATH_PROPERTY);
        if (cp != null && !cp.isEmpty()) {
            return new Launcher(cp, null, null);
        }
        Launcher jars = new Launcher(null, jar(CONTROL_PLANE_JAR_PROPERTY, CONTROL_PLANE_JAR), jar(AGENT_JAR_PROPERTY, AGENT_JAR));
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
            Path found = checkoutAbove(Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
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

    public List<String> agent(List<String> args) {
        return command(AgentMain.class, agentJar, "-Xmx256m", "agent", args);
    }

    /**
     * The JVM settings both processes run with (the images' entry points too), for a start on a
     * node's one or two cores (docs/benchmarks.md, "Start-up"):
     * <ul>
     *   <li>C1 and C2 compile a method only after five times their default counts of calls and
     *       loops: the compilers otherwise spend as much CPU in a start as the start itself, mostly
     *       on code that runs a few hundred times; hot paths (the verdict function, the
     *       calculation) reach C2 within their first tens of thousands of calls all the same;
     *   <li>the heap on transparent huge pages where the kernel's setting allows them (madvise or
     *       always): a start otherwise takes ~9,000 page faults for the heap's first touch, 0.9x
     *       of the start time without them. With the setting at never the heap simply gets small
     *       pages; a kernel built without them makes the JVM warn once;
     *   <li>an OutOfMemoryError exits the process (to be restarted) instead of killing whichever
     *       thread met it while the others go on (audit M4).
     * </ul>
     */
    public static final List<String> JVM_OPTIONS = List.of(
            "-XX:Tier3InvocationThreshold=1000", "-XX:Tier3MinInvocationThreshold=500",
            "-XX:Tier3CompileThreshold=10000", "-XX:Tier3BackEdgeThreshold=300000",
            "-XX:Tier4InvocationThreshold=25000", "-XX:Tier4MinInvocationThreshold=3000",
            "-XX:Tier4CompileThreshold=75000", "-XX:Tier4BackEdgeThreshold=200000",
            "-XX:+UseTransparentHugePages", "-XX:+ExitOnOutOfMemoryError");

    /**
     * The class-data-sharing archive the build made beside the jar (KIND.jsa), when there is one: a
     * faster start. {@code -Xshare:auto}: an archive of another JVM, or of an older jar, is ignored.
     */
    public static List<String> archiveOptions(Path jar) {
        String name = jar.getFileName().toString();
        Path archive = jar.resolveSibling(name.replaceFirst("\\.jar$", "") + ".jsa");
        return Files.isRegularFile(archive)
                ? List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto")
                : List.of();
    }

    private List<String> command(Class<?> main, Path jar, String heap, String subcommand, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", heap));
        cmd.addAll(JVM_OPTIONS);
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
