// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.runtime.BuildVersion;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

class KubeVerdictCommandTest {
    // Like the real subcommands: standard help options but no version of their own.
    @Command(name = "serve", mixinStandardHelpOptions = true)
    static final class Serve implements Callable<Integer> {
        @Mixin
        MetricsOptions metrics = new MetricsOptions(":9101");

        @Override
        public Integer call() {
            return 0;
        }
    }

    // No standard options at all: the root adds them.
    @Command(name = "bare", subcommands = Nested.class)
    static final class Bare implements Callable<Integer> {
        @Override
        public Integer call() {
            return 0;
        }
    }

    @Command(name = "nested")
    static final class Nested implements Callable<Integer> {
        @Override
        public Integer call() {
            return 0;
        }
    }

    private record Run(int code, String out, String err) {}

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine root = KubeVerdictCommand.forArgs("test jar", args, new Serve(), Bare.class);
        int code =
                root.setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void versionOnTheRootAndOnEverySubcommand() {
        String expected = "kube-verdict " + BuildVersion.current() + System.lineSeparator();
        for (String[] args : new String[][] {
            {"--version"}, {"-V"}, {"serve", "--version"}, {"bare", "--version"}, {"bare", "nested", "-V"}
        }) {
            Run r = run(args);
            assertThat(r.code()).as(String.join(" ", args)).isZero();
            assertThat(r.out()).as(String.join(" ", args)).isEqualTo(expected);
        }
    }

    @Test
    void aRunOfOneSubcommandBuildsOnlyThatOne() {
        assertThat(KubeVerdictCommand.forArgs("test jar", new String[] {"bare", "nested"}, new Serve(), Bare.class)
                        .getSubcommands())
                .containsOnlyKeys("bare", "help", "version", "completion");
        assertThat(KubeVerdictCommand.forArgs("test jar", new String[] {"serve"}, new Serve(), Bare.class)
                        .getSubcommands())
                .containsOnlyKeys("serve", "help", "version", "completion");
        assertThat(KubeVerdictCommand.forArgs("test jar", new String[] {"version"}, new Serve(), Bare.class)
                        .getSubcommands())
                .containsOnlyKeys("help", "version", "completion");
        for (String[] args : new String[][] {{}, {"--help"}, {"srve"}, {"-V", "serve"}}) {
            assertThat(KubeVerdictCommand.forArgs("test jar", args, new Serve(), Bare.class)
                            .getSubcommands())
                    .as(String.join(" ", args))
                    .containsOnlyKeys("serve", "bare", "help", "version", "completion");
        }
        Run typo = run("srve");
        assertThat(typo.code()).isEqualTo(2);
        assertThat(typo.err()).contains("serve");
    }

    @Test
    void helpListsTheSubcommandsAndTheRootAloneIsAUsageError() {
        Run help = run("--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("kube-verdict", "test jar", "serve", "bare");

        Run alone = run();
        assertThat(alone.code()).isEqualTo(2);
        assertThat(alone.err()).contains("Missing required subcommand", "serve", "bare");
    }

    @Test
    void metricsAddressDefaultsPerCommandAndCanBeTurnedOff() {
        Serve serve = new Serve();
        CommandLine cl = KubeVerdictCommand.root("test jar", serve);
        cl.parseArgs("serve");
        assertThat(serve.metrics.bind()).isEqualTo(new HostPort("", 9101));
        cl.parseArgs("serve", "--metrics-bind-address", "off");
        assertThat(serve.metrics.socketAddress()).isNull();
        cl.parseArgs("serve", "--metrics-bind-address=");
        assertThat(serve.metrics.bind()).isNull();
        cl.parseArgs("serve", "--metrics-bind-address", "[::1]:0");
        assertThat(serve.metrics.bind()).isEqualTo(new HostPort("::1", 0));

        Run bad = run("serve", "--metrics-bind-address", "::1:80");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--metrics-bind-address", "needs brackets");
        assertThat(run("serve", "--help").out()).contains("Default: :9101");
    }

    // An option of each kind a usage error can be about.
    @Command(name = "wait", mixinStandardHelpOptions = true)
    static final class Wait implements Callable<Integer> {
        @picocli.CommandLine.Option(names = "--timeout")
        java.time.Duration timeout;

        @picocli.CommandLine.Option(names = "--namespace")
        String namespace;

        @Override
        public Integer call() {
            return timeout == null ? 0 : (int) timeout.toSeconds();
        }
    }

    private static Run runWait(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = KubeVerdictCommand.root("test jar", new Wait())
                .setOut(new PrintWriter(out))
                .setErr(new PrintWriter(err))
                .execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void everyDurationOptionReadsGoDurationsAndIso8601() {
        assertThat(runWait("wait", "--timeout", "5s").code()).isEqualTo(5);
        assertThat(runWait("wait", "--timeout", "2m").code()).isEqualTo(120);
        assertThat(runWait("wait", "--timeout=1h30m").code()).isEqualTo(5400);
        assertThat(runWait("wait", "--timeout", "PT7S").code()).isEqualTo(7);
    }

    @Test
    void aUsageErrorIsTheErrorAndOneLineToTheHelpNeverTheWholeUsage() {
        Run bad = runWait("wait", "--timeout", "5x");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err())
                .contains("--timeout", "'5x' is no duration")
                .doesNotContain("DateTimeParseException")
                .endsWith("Run 'kube-verdict wait --help' for usage." + System.lineSeparator());
        assertThat(bad.err().lines()).hasSizeLessThanOrEqualTo(3);

        Run option = runWait("wait", "--namespce", "x");
        assertThat(option.code()).isEqualTo(2);
        assertThat(option.err()).contains("Unknown option", "Did you mean", "--namespace");
        assertThat(option.err().lines()).hasSizeLessThanOrEqualTo(4);

        Run dropped = runWait("wait", "--nmespace", "x");
        assertThat(dropped.err()).contains("Did you mean --namespace?");

        Run command = runWait("wiat");
        assertThat(command.code()).isEqualTo(2);
        assertThat(command.err()).contains("Did you mean", "wait").contains("Run 'kube-verdict --help'");
        assertThat(command.err().lines()).hasSizeLessThanOrEqualTo(4);
    }

    @Test
    void versionHelpAndCompletionAreCommandsAsInKubectl() {
        String expected = "kube-verdict " + BuildVersion.current() + System.lineSeparator();
        Run version = run("version");
        assertThat(version.code()).isZero();
        assertThat(version.out()).isEqualTo(expected);

        Run help = run("help", "serve");
        assertThat(help.code()).isZero();
        assertThat(help.out()).isEqualTo(run("serve", "--help").out()).contains("--metrics-bind-address");

        Run completion = run("completion");
        assertThat(completion.code()).isZero();
        assertThat(completion.out()).contains("complete -F", "kube-verdict", "serve", "--metrics-bind-address");
    }
}
