package io.kubeverdict.sandbox.cli;

import io.kubeverdict.agent.cli.AgentMain;
import io.kubeverdict.controlplane.cli.ControlPlaneMain;
import io.kubeverdict.controlplane.cli.VersionProvider;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of the developer CLI (sandbox/target/kube-verdict.jar, what bin/kube-verdict runs):
 * every subcommand under one root. The control plane's and the agent's commands are taken from
 * their own jars' roots, so each exists once and parses here exactly as in its image.
 */
@Command(name = "kube-verdict",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "kube-verdict: control plane, node agent, offline policy tools and the local sandbox.")
public final class KubeVerdictMain {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The root command with control-plane, matrix, explain (control plane), agent and sandbox. */
    public static CommandLine commandLine() {
        CommandLine root = new CommandLine(new KubeVerdictMain());
        new CommandLine(new ControlPlaneMain()).getSubcommands().forEach(root::addSubcommand);
        new CommandLine(new AgentMain()).getSubcommands().forEach(root::addSubcommand);
        root.addSubcommand(new SandboxCommand());
        return root;
    }
}
