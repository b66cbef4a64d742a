// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The root command {@code kube-verdict} of every jar: each jar's main assembles it from the
 * subcommands it has, and a CLI with several jars' commands assembles it from all of theirs.
 * {@code --help} and {@code --version} work on the root and on every subcommand.
 */
@Command(
        name = "kube-verdict",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        synopsisSubcommandLabel = "COMMAND")
public final class KubeVerdictCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    private KubeVerdictCommand() {}

    /**
     * The commands of every jar's root, kubectl's habits: {@code help COMMAND}, {@code version}
     * and {@code completion} (a bash/zsh completion script: {@code source <(kube-verdict completion)}).
     */
    private static final Class<?>[] BUILT_IN = {HelpCommand.class, VersionCommand.class, Completion.class};

    /** picocli's generator under kubectl's name for it. */
    @Command(
            name = "completion",
            description = {
                "Print a bash (and zsh) completion script for kube-verdict:",
                "  source <(kube-verdict completion)",
                "or save it as /etc/bash_completion.d/kube-verdict."
            })
    static final class Completion extends AutoComplete.GenerateCompletion {}

    /**
     * @param description what this jar does, shown by {@code kube-verdict --help}
     * @param subcommands {@code @Command} instances (or classes), each becoming {@code kube-verdict NAME}
     */
    public static CommandLine root(String description, Object... subcommands) {
        CommandLine root = new CommandLine(new KubeVerdictCommand());
        root.getCommandSpec().usageMessage().description(description);
        for (Object subcommand : subcommands) {
            root.addSubcommand(subcommand);
        }
        for (Object builtIn : BUILT_IN) {
            root.addSubcommand(builtIn);
        }
        root.setParameterExceptionHandler(new UsageErrors());
        // Every duration option of every command reads one syntax (after the subcommands: picocli
        // registers a converter with the commands added so far).
        root.registerConverter(Duration.class, new DurationText());
        standardOptionsEverywhere(root);
        return root;
    }

    /**
     * The root for one run with {@code args}: when the first argument names a subcommand, only
     * that one is built (picocli reads every option of every command it is given by reflection,
     * a tenth of a second of the control plane's start for its six); otherwise all of them, for
     * the root's help, its usage errors and their suggestions.
     */
    public static CommandLine forArgs(String description, String[] args, Object... subcommands) {
        if (args.length > 0) {
            if (args[0].equals("version")) {
                return root(description);
            }
            for (Object subcommand : subcommands) {
                Command command =
                        (subcommand instanceof Class<?> c ? c : subcommand.getClass()).getAnnotation(Command.class);
                if (command != null
                        && (command.name().equals(args[0])
                                || Arrays.asList(command.aliases()).contains(args[0]))) {
                    return root(description, subcommand);
                }
            }
        }
        return root(description, subcommands);
    }

    private static void standardOptionsEverywhere(CommandLine command) {
        CommandSpec spec = command.getCommandSpec();
        spec.mixinStandardHelpOptions(true);
        spec.versionProvider(new VersionProvider());
        for (CommandLine sub : command.getSubcommands().values()) {
            standardOptionsEverywhere(sub);
        }
    }

    /** {@code kube-verdict} alone: the commands on stderr and a usage error (exit 2). */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        spec.commandLine().getErr().println("error: Missing required subcommand");
        spec.commandLine().getErr().flush();
        return spec.exitCodeOnInvalidInput();
    }
}
