package io.kubeverdict.controlplane.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the control-plane jar: the service and the offline tools. */
@Command(name = "kube-verdict",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "kube-verdict control plane and offline policy tools.",
        subcommands = {ServeCommand.class, MatrixCommand.class, ExplainCommand.class})
public final class ControlPlaneMain {
    public static void main(String[] args) {
        System.exit(new CommandLine(new ControlPlaneMain()).execute(args));
    }
}
