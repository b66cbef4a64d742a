package io.kubeverdict.agent.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the agent jar: the node agent only. */
@Command(name = "kube-verdict",
        mixinStandardHelpOptions = true,
        version = "kube-verdict agent",
        description = "kube-verdict data plane agent.",
        subcommands = {RunCommand.class})
public final class AgentMain {
    public static void main(String[] args) {
        System.exit(new CommandLine(new AgentMain()).execute(args));
    }
}
