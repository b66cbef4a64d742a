package io.kubeverdict.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * What deploy/ runs must be what the code accepts: the images' entry points and the workloads'
 * arguments are parsed by the real picocli command trees (an unknown flag or subcommand fails),
 * and the launcher routes exactly the subcommands each jar has.
 */
class EntryPointsTest {
    private static final Path ROOT = repositoryRoot();

    @Test
    void controlPlaneDeploymentArgumentsParseAsTheServeCommand() throws IOException {
        List<String> args = containerArgs("deploy/base/control-plane.yaml", "Deployment");
        ParseResult parsed = new CommandLine(new ControlPlaneMain()).parseArgs(args.toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("control-plane");
        assertThat(parsed.subcommand().unmatched()).isEmpty();
        assertThat(parsed.subcommand().matchedOptions()).isNotEmpty();
    }

    @Test
    void mtlsOverlayControlPlaneArgumentsParseAsTheServeCommand() throws IOException {
        List<String> args = containerArgs("deploy/overlays/mtls/control-plane-tls.yaml", "Deployment");
        ParseResult parsed = new CommandLine(new ControlPlaneMain()).parseArgs(args.toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("control-plane");
        assertThat(parsed.subcommand().hasMatchedOption("--tls-client-ca")).isTrue();
    }

    @Test
    void agentDaemonSetArgumentsParseAsTheAgentCommand() throws IOException {
        for (String file : List.of("deploy/base/agent.yaml", "deploy/overlays/mtls/agent-tls.yaml")) {
            List<String> args = containerArgs(file, "DaemonSet").stream()
                    .map(a -> a.replace("$(NODE_NAME)", "node-1")).toList();
            ParseResult parsed = new CommandLine(new AgentMain()).parseArgs(args.toArray(String[]::new));
            assertThat(parsed.subcommand().commandSpec().name()).as(file).isEqualTo("agent");
            assertThat(parsed.subcommand().unmatched()).as(file).isEmpty();
            assertThat(parsed.subcommand().matchedOptionValue("--node", "")).as(file).isEqualTo("node-1");
        }
    }

    @Test
    void imagesRunTheJarsTheLauncherRunsWithRealSubcommands() throws IOException {
        String launcher = Files.readString(ROOT.resolve("bin/kube-verdict"));
        checkImage("deploy/docker/control-plane.Dockerfile", jarOf(launcher, "cp_jar"), new CommandLine(new ControlPlaneMain()));
        checkImage("deploy/docker/agent.Dockerfile", jarOf(launcher, "agent_jar"), new CommandLine(new AgentMain()));
    }

    @Test
    void launcherRoutesExactlyEachJarsSubcommands() throws IOException {
        String launcher = Files.readString(ROOT.resolve("bin/kube-verdict"));
        assertThat(routedTo(launcher, "cp_jar"))
                .isEqualTo(new TreeSet<>(new CommandLine(new ControlPlaneMain()).getSubcommands().keySet()));
        assertThat(routedTo(launcher, "agent_jar"))
                .isEqualTo(new TreeSet<>(new CommandLine(new AgentMain()).getSubcommands().keySet()));
    }

    private static void checkImage(String dockerfile, String launcherJar, CommandLine commands) throws IOException {
        String text = Files.readString(ROOT.resolve(dockerfile));
        Matcher copy = Pattern.compile("COPY --from=build /src/(\\S+) (\\S+)").matcher(text);
        assertThat(copy.find()).as(dockerfile + " copies the built jar").isTrue();
        assertThat(copy.group(1)).as(dockerfile + " builds the launcher's jar").isEqualTo(launcherJar);
        List<String> entrypoint = jsonArray(text, "ENTRYPOINT");
        assertThat(entrypoint).as(dockerfile + " runs the copied jar").endsWith("-jar", copy.group(2));
        List<String> cmd = jsonArray(text, "CMD");
        ParseResult parsed = commands.parseArgs(cmd.toArray(String[]::new));
        assertThat(parsed.hasSubcommand()).as(dockerfile + " CMD names a subcommand").isTrue();
    }

    /** Subcommands in the launcher's case arms that run the given jar variable. */
    private static Set<String> routedTo(String launcher, String jarVariable) {
        Set<String> names = new TreeSet<>();
        Matcher arm = Pattern.compile("(?m)^\\s*([a-z|-]+)\\)\\s*jar=\"\\$" + jarVariable + "\"").matcher(launcher);
        while (arm.find()) {
            names.addAll(List.of(arm.group(1).split("\\|")));
        }
        return names;
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

    @SuppressWarnings("unchecked")
    private static List<String> containerArgs(String file, String kind) throws IOException {
        for (Object doc : new Yaml().loadAll(Files.readString(ROOT.resolve(file)))) {
            Map<String, Object> object = (Map<String, Object>) doc;
            if (object != null && kind.equals(object.get("kind"))) {
                Map<String, Object> spec = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>)
                        object.get("spec")).get("template")).get("spec");
                Map<String, Object> container = ((List<Map<String, Object>>) spec.get("containers")).get(0);
                return (List<String>) container.get("args");
            }
        }
        throw new AssertionError("no " + kind + " in " + file);
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("bin/kube-verdict"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("repository root (bin/kube-verdict) not found");
        }
        return dir;
    }
}
