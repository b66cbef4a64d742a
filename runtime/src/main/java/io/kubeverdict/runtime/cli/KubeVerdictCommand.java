// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.runtime.cli;

import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
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
public final class KubeVerdictCommand implements Runnable {
    @Spec
    CommandSpec spec;

    private KubeVerdictCommand() {}

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

    /** {@code kube-verdict} alone: a usage error (exit 2) listing the commands. */
    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand");
    }
}
