// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.manifests.ManifestLoader;
import io.kubeverdict.sandbox.Launcher;
import io.kubeverdict.sandbox.cli.KubeVerdictMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * What deploy/ and bin/ run must be what the code accepts: the images' entry points and the
 * workloads' arguments are parsed by the real picocli command trees of their jars (an unknown
 * flag or subcommand fails), the images copy the very jars the sandbox launches, and
 * bin/kube-verdict knows exactly the developer CLI's subcommands and hands it those jars. The JVM
 * settings are written once (deploy/jvm.options): the images, bin/kube-verdict, bin/bench-startup
 * and the sandbox's Launcher all pass that file, and bin/kube-verdict control-plane|agent start
 * exactly as the images' entry points do.
 */
class EntryPointsTest {
    private static final Path ROOT = Launcher.home();
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    @Test
    void controlPlaneDeploymentArgumentsParseAsTheServeCommand() throws IOException {
        List<String> args = containerArgs("deploy/base/control-plane.yaml", Deployment.class);
        ParseResult parsed = ControlPlaneMain.commandLine().parseArgs(args.toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("control-plane");
        assertThat(parsed.subcommand().unmatched()).isEmpty();
        assertThat(parsed.subcommand().matchedOptions()).isNotEmpty();
    }

    @Test
    void mtlsOverlayControlPlaneArgumentsParseAsTheServeCommand() throws IOException {
        List<String> args = containerArgs("deploy/overlays/mtls/control-plane-tls.yaml", Deployment.class);
        ParseResult parsed = ControlPlaneMain.commandLine().parseArgs(args.toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("control-plane");
        assertThat(parsed.subcommand().hasMatchedOption("--tls-client-ca")).isTrue();
    }

    @Test
    void agentDaemonSetArgumentsParseAsTheAgentCommand() throws IOException {
        for (String file : List.of("deploy/base/agent.yaml", "deploy/overlays/mtls/agent-tls.yaml")) {
            List<String> args = containerArgs(file, DaemonSet.class).stream()
                    .map(a -> a.replace("$(NODE_NAME)", "node-1"))
                    .toList();
            ParseResult parsed = AgentMain.commandLine().parseArgs(args.toArray(String[]::new));
            assertThat(parsed.subcommand().commandSpec().name()).as(file).isEqualTo("agent");
            assertThat(parsed.subcommand().unmatched()).as(file).isEmpty();
            assertThat(parsed.subcommand().matchedOptionValue("--node", ""))
                    .as(file)
                    .isEqualTo("node-1");
        }
    }

    @Test
    void imagesShipTheJarsTheSandboxLaunchesWithRealSubcommands() throws IOException {
        checkImage(
                "deploy/docker/control-plane.Dockerfile", Launcher.CONTROL_PLANE_JAR, ControlPlaneMain.commandLine());
        checkImage("deploy/docker/agent.Dockerfile", Launcher.AGENT_JAR, AgentMain.commandLine());
    }

    @Test
    void theDeveloperCliHoldsEveryProcessCommandAndTheSandbox() {
        Set<String> expected =
                new TreeSet<>(ControlPlaneMain.commandLine().getSubcommands().keySet());
        expected.addAll(AgentMain.commandLine().getSubcommands().keySet());
        expected.add("sandbox");
        assertThat(new TreeSet<>(KubeVerdictMain.commandLine().getSubcommands().keySet()))
                .isEqualTo(expected)
                .contains("control-plane", "matrix", "explain", "agent");
    }

    @Test
    void launcherRunsTheDeveloperCliForItsSubcommandsAndPassesTheProcessJars() throws IOException {
        String launcher = Files.readString(ROOT.resolve("bin/kube-verdict"));
        Matcher list = Pattern.compile("(?m)^subcommands=\"([^\"]*)\"").matcher(launcher);
        assertThat(list.find()).as("bin/kube-verdict lists its subcommands").isTrue();
        assertThat(new TreeSet<>(List.of(list.group(1).split(" "))))
                .isEqualTo(new TreeSet<>(
                        KubeVerdictMain.commandLine().getSubcommands().keySet()));
        assertThat(jarOf(launcher, "cli_jar")).isEqualTo("sandbox/target/kube-verdict.jar");
        assertThat(jarOf(launcher, "cp_jar")).isEqualTo(Launcher.CONTROL_PLANE_JAR);
        assertThat(jarOf(launcher, "agent_jar")).isEqualTo(Launcher.AGENT_JAR);
        assertThat(launcher)
                .contains("-D" + Launcher.CONTROL_PLANE_JAR_PROPERTY + "=\"$cp_jar\"")
                .contains("-D" + Launcher.AGENT_JAR_PROPERTY + "=\"$agent_jar\"")
                .contains("-jar \"$cli_jar\"");
    }

    @Test
    void theStartUpBenchmarkStartsLikeTheImagesAndTheLauncher() throws IOException {
        String bench = Files.readString(ROOT.resolve("bin/bench-startup"));
        assertThat(bench).contains("jvm=(\"@$root/" + Launcher.JVM_OPTIONS_FILE + "\")");
    }

    @Test
    void theSandboxPassesTheJvmOptionsFile() {
        assertThat(Launcher.jvmOptions()).isEqualTo("@" + ROOT.resolve(Launcher.JVM_OPTIONS_FILE));
    }

    @Test
    void theJvmOptionsFileIsAnArgfileThisJvmAccepts() throws Exception {
        // An unknown or misspelt -XX option makes java exit 1 ("Unrecognized VM option").
        Process java = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        Launcher.jvmOptions(),
                        "-version")
                .redirectErrorStream(true)
                .start();
        String output = new String(java.getInputStream().readAllBytes());
        assertThat(java.waitFor()).as(output).isZero();
    }

    @Test
    void theLauncherStartsTheProcessesAsTheirImagesDo(@TempDir Path checkout) throws Exception {
        Path jsa = fakeCheckout(checkout);
        assertThat(launch(checkout, "control-plane", "--listen", "x:1"))
                .isEqualTo(imageCommand(
                        "deploy/docker/control-plane.Dockerfile", checkout, "control-plane", "--listen", "x:1"));
        assertThat(launch(checkout, "agent", "--node", "n1"))
                .isEqualTo(imageCommand("deploy/docker/agent.Dockerfile", checkout, "agent", "--node", "n1"));
        // Without the archive (a build that skipped it), the same minus the archive's options.
        Files.delete(jsa);
        assertThat(launch(checkout, "agent", "--node", "n1"))
                .doesNotContain("-Xshare:auto")
                .noneMatch(a -> a.startsWith("-XX:SharedArchiveFile"))
                .contains("-jar", "agent", "--node", "n1");
        // Every other subcommand: the developer CLI.
        assertThat(launch(checkout, "matrix", "--manifests", "d"))
                .endsWith(
                        "-jar",
                        checkout.resolve("sandbox/target/kube-verdict.jar").toString(),
                        "matrix",
                        "--manifests",
                        "d");
    }

    /** A checkout holding bin/kube-verdict, deploy/jvm.options, empty jars and archives, and a java that prints its arguments. */
    private static Path fakeCheckout(Path checkout) throws IOException {
        for (String file : List.of("bin/kube-verdict", Launcher.JVM_OPTIONS_FILE)) {
            Files.createDirectories(checkout.resolve(file).getParent());
            Files.copy(ROOT.resolve(file), checkout.resolve(file));
        }
        Path agentJsa = null;
        for (String jar : List.of("sandbox/target/kube-verdict.jar", Launcher.CONTROL_PLANE_JAR, Launcher.AGENT_JAR)) {
            Files.createDirectories(checkout.resolve(jar).getParent());
            Files.createFile(checkout.resolve(jar));
            Path jsa = Files.createFile(checkout.resolve(jar.replaceFirst("\\.jar$", ".jsa")));
            agentJsa = jar.equals(Launcher.AGENT_JAR) ? jsa : agentJsa;
        }
        Path java = checkout.resolve("jdk/bin/java");
        Files.createDirectories(java.getParent());
        Files.writeString(java, "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\"\n");
        assertThat(java.toFile().setExecutable(true)).isTrue();
        return agentJsa;
    }

    /** The java command line bin/kube-verdict ARGS runs in the fake checkout. */
    private static List<String> launch(Path checkout, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(
                List.of("bash", checkout.resolve("bin/kube-verdict").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(cmd);
        builder.environment().put("JAVA_HOME", checkout.resolve("jdk").toString());
        builder.environment().remove("KUBE_VERDICT_JAVA_OPTS");
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes());
        String err = new String(process.getErrorStream().readAllBytes());
        assertThat(process.waitFor()).as(err).isZero();
        return out.lines().toList();
    }

    /**
     * The image's ENTRYPOINT with its paths as in the checkout (every COPY's absolute destination
     * replaced by its source, the archive the image dumps by the one the build dumps beside the jar), then
     * ARGS in place of its CMD.
     */
    private static List<String> imageCommand(String dockerfile, Path checkout, String... args) throws IOException {
        String text = Files.readString(ROOT.resolve(dockerfile));
        Map<String, String> local = new LinkedHashMap<>();
        Matcher copy = Pattern.compile("(?m)^COPY (?:--from=build /src/)?(\\S+) (/\\S+)$")
                .matcher(text);
        while (copy.find()) {
            String source = checkout.resolve(copy.group(1)).toString();
            local.put(copy.group(2), source);
            if (copy.group(2).endsWith(".jar")) {
                local.put(copy.group(2).replaceFirst("\\.jar$", ".jsa"), source.replaceFirst("\\.jar$", ".jsa"));
            }
        }
        List<String> command = new ArrayList<>();
        for (String arg : jsonArray(text, "ENTRYPOINT")) {
            for (Map.Entry<String, String> e : local.entrySet()) {
                arg = arg.replace(e.getKey(), e.getValue());
            }
            command.add(arg);
        }
        command.set(0, checkout.resolve("jdk/bin/java").toString());
        command.addAll(List.of(args));
        return command;
    }

    private static void checkImage(String dockerfile, String jar, CommandLine commands) throws IOException {
        String text = Files.readString(ROOT.resolve(dockerfile));
        Matcher build = Pattern.compile("mvnw .*-pl (\\S+) -am package").matcher(text);
        assertThat(build.find()).as(dockerfile + " builds one module").isTrue();
        assertThat(jar).as(dockerfile + " builds the module of the jar").startsWith(build.group(1) + "/target/");
        Matcher copy = Pattern.compile("COPY --from=build /src/(\\S+) (\\S+)").matcher(text);
        assertThat(copy.find()).as(dockerfile + " copies the built jar").isTrue();
        assertThat(copy.group(1))
                .as(dockerfile + " ships the jar the sandbox runs")
                .isEqualTo(jar);
        List<String> entrypoint = jsonArray(text, "ENTRYPOINT");
        assertThat(entrypoint).as(dockerfile + " runs the copied jar").endsWith("-jar", copy.group(2));
        Matcher options = Pattern.compile("(?m)^COPY " + Pattern.quote(Launcher.JVM_OPTIONS_FILE) + " (\\S+)$")
                .matcher(text);
        assertThat(options.find())
                .as(dockerfile + " copies " + Launcher.JVM_OPTIONS_FILE)
                .isTrue();
        assertThat(entrypoint)
                .as(dockerfile + " starts java with the JVM settings file")
                .startsWith("java", "@" + options.group(1));
        List<String> cmd = jsonArray(text, "CMD");
        ParseResult parsed = commands.parseArgs(cmd.toArray(String[]::new));
        assertThat(parsed.hasSubcommand())
                .as(dockerfile + " CMD names a subcommand")
                .isTrue();
    }

    private static String jarOf(String launcher, String variable) {
        Matcher m = Pattern.compile(variable + "=\"\\$root/([^\"]+)\"").matcher(launcher);
        assertThat(m.find()).as("launcher defines " + variable).isTrue();
        return m.group(1);
    }

    private static List<String> jsonArray(String dockerfile, String instruction) {
        Matcher m = Pattern.compile("(?m)^" + instruction + "\\s+\\[(.*)]\\s*$").matcher(dockerfile);
        assertThat(m.find()).as(instruction + " in exec form").isTrue();
        List<String> items = new ArrayList<>();
        Matcher item = Pattern.compile("\"([^\"]*)\"").matcher(m.group(1));
        while (item.find()) {
            items.add(item.group(1));
        }
        return items;
    }

    /** The first container's args of the first workload of the given kind in file (fabric8's typed model). */
    private static List<String> containerArgs(String file, Class<?> kind) throws IOException {
        for (String document : ManifestLoader.splitDocuments(Files.readString(ROOT.resolve(file)))) {
            Object object = SERIALIZATION.unmarshal(document);
            PodTemplateSpec template = object instanceof Deployment d && kind == Deployment.class
                    ? d.getSpec().getTemplate()
                    : object instanceof DaemonSet ds && kind == DaemonSet.class
                            ? ds.getSpec().getTemplate()
                            : null;
            if (template != null) {
                return template.getSpec().getContainers().get(0).getArgs();
            }
        }
        throw new AssertionError("no " + kind.getSimpleName() + " in " + file);
    }
}
